// SPDX-License-Identifier: Apache-2.0
// Parsing of the block layer's /sys/block/<dev>/stat file
// (Documentation/block/stat.rst) into model::IoStats.
#ifndef PATHWISE_COLLECTORS_BLOCK_STAT_H_
#define PATHWISE_COLLECTORS_BLOCK_STAT_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/topology.h"

namespace pathwise::collectors {

// Accepts the 11-field (pre-4.18), 15-field (discard, 4.18+) and 17-field
// (flush, 5.5+) layouts. Sectors are always 512 bytes; times are in ms.
// Ops the kernel does not report stay nullopt. Flush has no sector count, so
// its bytes are 0.
absl::StatusOr<model::IoStats> ParseBlockStat(absl::string_view text);

}  // namespace pathwise::collectors

#endif  // PATHWISE_COLLECTORS_BLOCK_STAT_H_

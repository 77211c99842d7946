// SPDX-License-Identifier: Apache-2.0
#include "collectors/block_stat.h"

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace pathwise::collectors {

absl::StatusOr<model::IoStats> ParseBlockStat(absl::string_view text) {
  std::vector<uint64_t> f;
  for (absl::string_view tok :
       absl::StrSplit(text, absl::ByAnyChar(" \t\n"), absl::SkipEmpty())) {
    uint64_t v = 0;
    if (!absl::SimpleAtoi(tok, &v)) {
      return absl::InvalidArgumentError(absl::StrCat("field ", f.size() + 1,
                                                     " is not a number: \"",
                                                     tok.substr(0, 32), "\""));
    }
    f.push_back(v);
  }
  if (f.size() != 11 && f.size() != 15 && f.size() != 17) {
    return absl::InvalidArgumentError(
        absl::StrCat("has ", f.size(), " fields, want 11, 15 or 17"));
  }
  constexpr uint64_t kSector = 512;
  constexpr uint64_t kNsPerMs = 1000000;
  model::IoStats s;
  s.op(model::Op::kRead) =
      model::OpStats{f[0], f[2] * kSector, f[3] * kNsPerMs};
  s.op(model::Op::kWrite) =
      model::OpStats{f[4], f[6] * kSector, f[7] * kNsPerMs};
  s.inflight = f[8];
  if (f.size() >= 15) {
    s.op(model::Op::kDiscard) =
        model::OpStats{f[11], f[13] * kSector, f[14] * kNsPerMs};
  }
  if (f.size() >= 17) {
    s.op(model::Op::kFlush) = model::OpStats{f[15], 0, f[16] * kNsPerMs};
  }
  return s;
}

}  // namespace pathwise::collectors

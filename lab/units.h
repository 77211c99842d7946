// SPDX-License-Identifier: Apache-2.0
// The scenario file's value syntax: integers in a range, and durations,
// sizes, bandwidths and fractions with their units, each an error that
// names the value.
#ifndef PATHWISE_LAB_UNITS_H_
#define PATHWISE_LAB_UNITS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace pathwise::lab {

// Durations: 250ns, 100us, 30ms, 1.5s, 2m. Sizes: 4096, 4k, 4KiB, 1M (at
// least one byte once rounded). Bandwidth: 117MiB/s, 1Gbit/s, 125MB/s.
// Fractions: 5% or 0.05.
absl::StatusOr<int64_t> ParseDuration(absl::string_view s);
absl::StatusOr<uint64_t> ParseSize(absl::string_view s);
absl::StatusOr<double> ParseBandwidth(absl::string_view s);
absl::StatusOr<double> ParseFraction(absl::string_view s);
// An integer in [lo, hi]: "bad integer 'S' (want LO..HI)" otherwise.
absl::StatusOr<int64_t> ParseInt(absl::string_view s, int64_t lo, int64_t hi);

// "bad WHAT 'VALUE'", the form every value error takes.
absl::Status BadValue(absl::string_view what, absl::string_view value);

}  // namespace pathwise::lab

#endif  // PATHWISE_LAB_UNITS_H_

// SPDX-License-Identifier: Apache-2.0
// Helpers for the selector tests: paths, I/Os and time units.
#ifndef PATHWISE_TESTS_UNIT_POLICY_SELECTOR_FIXTURE_H_
#define PATHWISE_TESTS_UNIT_POLICY_SELECTOR_FIXTURE_H_

#include <cstdint>
#include <vector>

#include "policy/selector.h"

namespace pathwise::policy {

constexpr int64_t kUs = 1000;
constexpr int64_t kMs = 1000 * kUs;
constexpr int64_t kSec = 1000 * kMs;

inline PathInfo Path(bool usable = true, int node = -1, bool optimized = true) {
  return PathInfo{.usable = usable, .optimized = optimized, .numa_node = node};
}

inline IoRequest Read(int cpu = 0, int node = 0) {
  return IoRequest{.op = model::OpGroup::kRead, .cpu = cpu, .numa_node = node};
}

// Selects, submits and completes one I/O at `now` with the latency of the
// chosen path; returns the path.
inline int RoundTrip(Selector& s, const IoRequest& io, int64_t now,
                     const std::vector<int64_t>& latency) {
  const int p = s.Select(io);
  if (p == kNoPath) return p;
  s.OnSubmit(p, io, now);
  s.OnComplete(p, io, {.now_ns = now + latency[p], .latency_ns = latency[p]});
  return p;
}

}  // namespace pathwise::policy

#endif  // PATHWISE_TESTS_UNIT_POLICY_SELECTOR_FIXTURE_H_

// SPDX-License-Identifier: Apache-2.0
// The path selection policies and their parameters: the vocabulary shared by
// the selectors (selector.h), `pathwise lab` and a userspace datapath.
#ifndef PATHWISE_POLICY_POLICY_H_
#define PATHWISE_POLICY_POLICY_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/string_view.h"

namespace pathwise::policy {

enum class Policy {
  kNuma,        // kernel numa: the nearest path, first in list order on ties
  kRoundRobin,  // kernel round-robin
  kQueueDepth,  // kernel queue-depth: least in-flight per controller
  kLatency,     // the proposed kernel latency iopolicy (per-CPU EWMA,
                // weights, credits)
  kPathwise,    // the lowest-latency path up to its knee, then the next
  kHst,         // dm-multipath historical-service-time
};
inline constexpr int kPolicyCount = 6;

// "numa", "round-robin", "queue-depth", "latency", "pathwise", "hst": the
// names on the command line and in reports.
absl::string_view PolicyName(Policy p);
std::optional<Policy> PolicyFromName(absl::string_view name);
// Every policy, in the order above (the order of reports).
std::vector<Policy> AllPolicies();

// Whether a kernel's nvme-subsystem iopolicy attribute accepts the policy:
// numa, round-robin and queue-depth (Linux 6.11 and later). latency is a
// proposal, pathwise is this project's selector (its ublk datapath) and hst
// is dm-multipath's: they are simulated for comparison and cannot be set.
bool IsKernelIopolicy(Policy p);
// Why a policy cannot be set in the kernel, a few words; "" when it can.
absl::string_view NotSettableReason(Policy p);

inline constexpr int64_t kNsPerSec = 1'000'000'000;

// The proposed kernel latency iopolicy: per CPU and op group, completions'
// path latencies are batched; the first completion after `window_ns` folds
// each path's batch mean into its EWMA.
struct LatencyPolicyParams {
  int64_t window_ns = 15 * kNsPerSec;
  int ewma_shift = 3;
};

// pathwise: the scoring library is fed once per `window_ns` (the agent's
// --interval), which is also the tick a path's lowest latency is kept per.
struct PathwisePolicyParams {
  int64_t window_ns = 1 * kNsPerSec;
  int ewma_shift = 3;
};

// dm-multipath historical-service-time: a per-path EWMA of completion time.
struct HstParams {
  int ewma_shift = 3;
};

// Every policy's parameters; a selector reads its own.
struct PolicyParams {
  LatencyPolicyParams latency;
  PathwisePolicyParams pathwise;
  HstParams hst;
};

}  // namespace pathwise::policy

#endif  // PATHWISE_POLICY_POLICY_H_

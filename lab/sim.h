// SPDX-License-Identifier: Apache-2.0
// The `pathwise lab` simulator: a deterministic discrete-event model of one
// NVMe multipath head, its paths and a closed-loop fio-like workload, run
// under one path selector of the policy library (policy/selector.h). The
// model is documented in lab/README.md.
//
// Deterministic: the only randomness is a xoshiro256++ generator seeded
// with the given seed (lab/random.h); simultaneous events are ordered by
// insertion (lab/event_queue.h). No wall clock.
#ifndef PATHWISE_LAB_SIM_H_
#define PATHWISE_LAB_SIM_H_

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "absl/strings/string_view.h"
#include "lab/scenario.h"
#include "policy/policy.h"

namespace pathwise::lab {

struct OpResult {
  uint64_t ios = 0;
  uint64_t bytes = 0;
  double mib_s = 0;
  double iops = 0;
  // Completion latency seen by the application (head submit to completion,
  // including any failover), interpolated in a log-linear histogram of
  // < 1.6 % bucket width (lab/latency_histogram.h).
  double p50_ms = 0, p99_ms = 0, p999_ms = 0;
};

struct PolicyResult {
  policy::Policy policy = policy::Policy::kNuma;
  std::array<OpResult, 2> ops;     // read, write
  std::vector<uint64_t> path_ios;  // completions per path
  uint64_t failovers = 0;
  uint64_t events = 0;  // simulation events processed
};

inline constexpr std::array<absl::string_view, 2> kOpNames = {"read", "write"};

// One completed I/O (`pathwise lab --trace`): when the application sent it,
// which path completed it and when it was sent there, and how many paths
// failed it over before.
struct IoTrace {
  int op = 0;    // index into kOpNames
  int path = 0;  // the scenario's path index
  int failovers = 0;
  int64_t submit_ns = 0;
  int64_t path_submit_ns = 0;
  int64_t complete_ns = 0;
};
using IoObserver = std::function<void(const IoTrace&)>;

// `observer`, when set, sees every completion in simulated-time order.
PolicyResult Simulate(const Scenario& scenario, policy::Policy policy,
                      uint64_t seed, const IoObserver& observer = {});

}  // namespace pathwise::lab

#endif  // PATHWISE_LAB_SIM_H_

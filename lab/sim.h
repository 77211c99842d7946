// The `pathwise lab` simulator: a deterministic discrete-event model of one
// NVMe multipath head, its paths and a closed-loop fio-like workload, run
// under one path selection policy. The model is documented in lab/README.md.
//
// Deterministic: the only randomness is a xoshiro256++ generator seeded
// with the given seed; simultaneous events are ordered by insertion. No
// wall clock.
#ifndef PATHWISE_LAB_SIM_H_
#define PATHWISE_LAB_SIM_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "lab/scenario.h"

namespace pathwise::lab {

enum class Policy {
  kNuma,        // kernel numa: the nearest path, first in list order on ties
  kRoundRobin,  // kernel round-robin
  kQueueDepth,  // kernel queue-depth: least in-flight per controller
  kLatency,     // the seed's latency iopolicy (per-CPU EWMA, weights, credits)
  kPathwise,    // pathwise's selector on the scoring library
  kHst,         // dm-multipath historical-service-time
};
inline constexpr int kPolicyCount = 6;

absl::string_view PolicyName(Policy p);
std::optional<Policy> PolicyFromName(absl::string_view name);
std::vector<Policy> AllPolicies();

struct OpResult {
  uint64_t ios = 0;
  uint64_t bytes = 0;
  double mib_s = 0;
  double iops = 0;
  // Completion latency seen by the application (head submit to completion,
  // including any failover), from a log-linear histogram (< 1% error).
  double p50_ms = 0, p99_ms = 0, p999_ms = 0;
};

struct PolicyResult {
  Policy policy = Policy::kNuma;
  std::array<OpResult, 2> ops;     // read, write
  std::vector<uint64_t> path_ios;  // completions per path
  uint64_t failovers = 0;
  uint64_t events = 0;  // simulation events processed
};

inline constexpr std::array<absl::string_view, 2> kOpNames = {"read", "write"};

PolicyResult Simulate(const Scenario& scenario, Policy policy, uint64_t seed);

}  // namespace pathwise::lab

#endif  // PATHWISE_LAB_SIM_H_

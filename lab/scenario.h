// SPDX-License-Identifier: Apache-2.0
// `pathwise lab` scenarios: paths with a service model, scripted events and a
// closed-loop workload. The file format is documented in lab/README.md and
// in docs/lab.md; ParseScenario() reports errors as
// "FILE:LINE: what is wrong".
#ifndef PATHWISE_LAB_SCENARIO_H_
#define PATHWISE_LAB_SCENARIO_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lab/units.h"  // the value parsers (ParseDuration() ...)
#include "model/types.h"
#include "policy/policy.h"

namespace pathwise::lab {

inline constexpr int64_t kMs = 1'000'000;
inline constexpr int64_t kSec = 1'000'000'000;

// What a scenario may ask for, so that the simulator's state (per
// outstanding I/O, per target server, per path and connection, per CPU and
// path in the latency policy) stays within a few hundred MiB per policy run:
// beyond them a file is a parse error that states the limit.
inline constexpr int kMaxPaths = 256;
inline constexpr int64_t kMaxOutstandingIos = 1 << 18;  // numjobs × iodepth
inline constexpr int64_t kMaxServers = 1 << 20;  // parallelism, all paths

struct PathSpec {
  std::string name;
  // Service model, in the order an I/O meets it:
  double bandwidth = 0;  // bytes/s per direction (full duplex); 0 unlimited
  // One direction's rate where it differs (a link shaped at one end, as
  // netem's rate on the target's side limits only what the target sends):
  // read data travels target->host, write data host->target. -1: bandwidth.
  double read_bandwidth = -1;
  double write_bandwidth = -1;
  int parallelism = 0;     // target I/Os in service at once; 0 unlimited
  int64_t service_ns = 0;  // target service time per I/O (reads)
  // A write's service time where it differs from a read's (a flash target's
  // program cost, a write-back cache's quick acknowledgement); -1: the same.
  int64_t write_service_ns = -1;
  int64_t latency_ns = 100'000;  // round trip (pure delay, no capacity)
  int64_t spread_ns = 0;         // mean of an exponential extra delay
  int queues = 0;                // TCP connections; 0: one per CPU
  int mss = 1448;                // TCP segment payload, for loss
  int numa_node = 0;
  model::AnaState ana = model::AnaState::kOptimized;
};

// The rate of the link that carries an I/O's data (`read`: target->host),
// bytes/s; 0: unlimited.
double LinkRate(const PathSpec& spec, bool read);

enum class EventKind { kDelay, kLoss, kDown, kUp, kAna };

struct Event {
  int64_t at_ns = 0;
  int path = 0;
  EventKind kind = EventKind::kDelay;
  int64_t delay_ns = 0;  // kDelay: extra round-trip delay from now on
  double loss = 0;       // kLoss: per-segment loss probability from now on
  model::AnaState ana = model::AnaState::kOptimized;  // kAna
};

struct Workload {
  int numjobs = 1;
  int iodepth = 1;
  uint32_t bs = 4096;
  double read_fraction = 1.0;
  int cpus = 0;  // 0: numjobs (job j runs on CPU j % cpus)
  int numa_node = 0;
  // The host's own cost per I/O before it reaches a path (the block layer,
  // a ublk round trip through a userspace datapath): CPU time on the I/O's
  // CPU, one I/O at a time per CPU, and a delay that takes no CPU. Both
  // count in the I/O's latency at the head, neither in its path latency.
  int64_t cpu_per_io_ns = 0;
  int64_t host_latency_ns = 0;
};

struct TcpModel {
  int64_t rto_min_ns = 200 * kMs;  // Linux TCP_RTO_MIN
  int64_t rto_max_ns = 120 * kSec;
  int dupthresh = 3;  // segments after a loss needed for fast retransmit
  // Tail loss probe (Linux's default, net.ipv4.tcp_early_retrans = 3): a
  // loss with too few segments after it for duplicate ACKs is found by a
  // probe after max(2 round trips, 10 ms) instead of the retransmission
  // timer, and repaired as fast retransmit repairs one.
  bool tlp = true;
  // The congestion window's growth and reduction: Linux's default, CUBIC,
  // or Reno (lab/README.md, "The model").
  enum class Congestion { kCubic, kReno };
  Congestion congestion = Congestion::kCubic;
  // The most a connection keeps in flight, whatever its congestion window:
  // the receiver's window. Linux's default is half of tcp_rmem's 6 MiB
  // maximum (tcp_adv_win_scale = 1); tcp_wmem's 4 MiB bounds the sender
  // about as much.
  int64_t window_bytes = 3 << 20;
};

struct Scenario {
  std::string name;
  std::string description;
  int64_t duration_ns = 60 * kSec;
  uint64_t seed = 1;
  Workload workload;
  TcpModel tcp;
  std::vector<PathSpec> paths;
  std::vector<Event> events;  // sorted by time (stable)
  // [policy latency], [policy pathwise], [policy hst]
  policy::LatencyPolicyParams latency;
  policy::PathwisePolicyParams pathwise;
  policy::HstParams hst;
};

// Parses scenario text; `file` names it in error messages. Besides each
// value's syntax and range it rejects what the simulator cannot run: a path
// whose I/Os take no time at all (simulated time would stop), rto_max below
// rto_min, and anything beyond the limits above.
absl::StatusOr<Scenario> ParseScenario(absl::string_view text,
                                       absl::string_view file);
// Reads and parses the file at `path` ("PATH: is a directory" for one).
absl::StatusOr<Scenario> LoadScenario(const std::string& path);

}  // namespace pathwise::lab

#endif  // PATHWISE_LAB_SCENARIO_H_

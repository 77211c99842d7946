// The pathwise data model: an immutable snapshot of the NVMe multipath
// topology (subsystems, heads, paths, controllers) plus per-path and per-head
// I/O statistics and the outcome of each collector.
//
// Data flows one way: collectors fill a Snapshot, the agent publishes it
// through a SnapshotStore, exporters read it. A published Snapshot is never
// mutated again.
//
// All names are the kernel's: nvme-subsys0, nvme0n1 (head), nvme0c1n1 (path),
// nvme1 (controller).
#ifndef PATHWISE_MODEL_TOPOLOGY_H_
#define PATHWISE_MODEL_TOPOLOGY_H_

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace pathwise::model {

// The ANA states of a path, as the kernel spells them in
// /sys/block/nvmeXcYnZ/ana_state. Exported as a StateSet.
inline constexpr std::array<absl::string_view, 5> kAnaStates = {
    "optimized", "non-optimized", "inaccessible", "persistent-loss", "change"};

// Controller states exported as a StateSet. The kernel's
// "deleting (no IO)" is reported as "deleting" (see NormalizeControllerState).
inline constexpr std::array<absl::string_view, 6> kControllerStates = {
    "live", "connecting", "resetting", "deleting", "dead", "new"};

// Maps the kernel's controller state string onto kControllerStates; returns
// the input unchanged when it is not one of them.
std::string NormalizeControllerState(absl::string_view kernel_state);

struct DevId {
  uint32_t major = 0;
  uint32_t minor = 0;
  friend bool operator==(const DevId&, const DevId&) = default;
};
std::string ToString(const DevId& dev);  // "259:0"

struct Subsystem {
  std::string name;      // nvme-subsys0
  std::string nqn;       // subsysnqn
  std::string iopolicy;  // numa | round-robin | queue-depth; "" if unknown
  std::string model;
  std::string serial;
};

// A multipath head: the visible block device (nvme0n1).
struct Head {
  std::string name;       // nvme0n1
  std::string subsystem;  // nvme-subsys0
  uint32_t nsid = 0;      // 0 if unknown
  std::optional<DevId> dev;
};

// A path: the hidden per-controller block device (nvme0c1n1).
struct Path {
  std::string name;        // nvme0c1n1
  std::string subsystem;   // nvme-subsys0
  std::string head;        // nvme0n1
  std::string controller;  // nvme1
  // Unknown on kernels ≥ 5.15, which expose no dev_t for hidden disks.
  std::optional<DevId> dev;
  std::string ana_state;  // kernel string; "" if unknown
  int numa_node = -1;     // the controller's NUMA node, -1 if none/unknown
};

struct Controller {
  std::string name;       // nvme1
  std::string subsystem;  // nvme-subsys0
  std::string transport;  // pcie | tcp | rdma | fc | loop
  std::string address;    // the kernel's "address" attribute, verbatim
  std::string traddr;
  std::string trsvcid;
  std::string host_traddr;  // "" where the transport has none
  std::string host_iface;   // "" where the transport has none
  std::string state;        // the kernel's state string; "" if unknown
  std::string cntlid;       // decimal; "" if unknown
  int numa_node = -1;
  // Number of I/O queues: the kernel's queue_count minus the admin queue.
  std::optional<uint32_t> io_queues;
};

// Vectors are sorted by name in natural order (nvme2 before nvme10).
struct Topology {
  std::vector<Subsystem> subsystems;
  std::vector<Head> heads;
  std::vector<Path> paths;
  std::vector<Controller> controllers;

  const Subsystem* FindSubsystem(absl::string_view name) const;
  const Head* FindHead(absl::string_view name) const;
  const Path* FindPath(absl::string_view name) const;
  const Controller* FindController(absl::string_view name) const;

  // Sorts every vector in natural name order.
  void Sort();

  bool empty() const {
    return subsystems.empty() && heads.empty() && paths.empty() &&
           controllers.empty();
  }
};

// Whether two topologies differ in structure: the set of subsystems, heads,
// paths and controllers and how they relate (path → head, controller).
// State (ANA, controller state) and attributes are not structure.
bool StructureDiffers(const Topology& a, const Topology& b);

// Operation classes for I/O statistics. The sysfs fallback fills read, write,
// discard and flush; the BPF sampler (issue 4) also fills passthru and other.
enum class Op : uint8_t { kRead, kWrite, kDiscard, kFlush, kPassthru, kOther };
inline constexpr int kOpCount = 6;
inline constexpr std::array<absl::string_view, kOpCount> kOpNames = {
    "read", "write", "discard", "flush", "passthru", "other"};
inline absl::string_view OpName(Op op) {
  return kOpNames[static_cast<int>(op)];
}

// A latency histogram with Prometheus semantics: counts[i] observations
// fell in (upper_bounds[i-1], upper_bounds[i]] (inclusive upper bounds, the
// `le` label). The last bound is +Inf. Only the BPF sampler fills these.
struct Histogram {
  // Seconds, ascending, the last one +Inf; shared by every histogram of
  // one layout.
  std::shared_ptr<const std::vector<double>> upper_bounds;
  std::vector<uint64_t> counts;  // non-cumulative, one per bound
  double sum_seconds = 0;

  uint64_t Count() const;
  // Cumulative counts, as exported: the last equals Count().
  std::vector<uint64_t> Cumulative() const;
  friend bool operator==(const Histogram& a, const Histogram& b);
};

struct OpStats {
  uint64_t completed = 0;  // completed I/Os
  uint64_t bytes = 0;
  uint64_t time_ns = 0;  // summed I/O time
  // BPF sampler only: completions with a non-zero block status, and the
  // issue-to-completion latency of the `completed` I/Os.
  std::optional<uint64_t> errors;
  std::optional<Histogram> latency;
  friend bool operator==(const OpStats&, const OpStats&) = default;
};

// Cumulative I/O statistics of one block device (a path or a head).
// This is the seam for the BPF sampler: it fills the same struct (and adds
// its histograms next to it) for the same devices.
struct IoStats {
  std::array<std::optional<OpStats>, kOpCount> ops;  // nullopt: not reported
  std::optional<uint64_t> inflight;

  std::optional<OpStats>& op(Op o) { return ops[static_cast<int>(o)]; }
  const std::optional<OpStats>& op(Op o) const {
    return ops[static_cast<int>(o)];
  }
};

// Per-path NVMe completion statistics (BPF sampler only).
struct PathNvmeStats {
  // Completions with a non-zero NVMe status, by status class label
  // ("generic", "command_specific", "media", "path", "vendor", "reserved").
  // Empty when the nvme_complete_rq program is not attached.
  std::vector<std::pair<std::string, uint64_t>> errors_by_class;
  uint64_t retries = 0;    // completions of retried commands
  uint64_t failovers = 0;  // requests failed over to another path
};

// The BPF sampler's own statistics.
struct SamplerStats {
  // Events the kernel side could not account, by reason label.
  std::vector<std::pair<std::string, uint64_t>> dropped;
  struct Program {
    std::string name;  // kernel program name, e.g. pw_done_btf
    uint64_t run_time_ns = 0;
    uint64_t run_count = 0;
  };
  // Filled only while kernel program run statistics are collected
  // (kernel.bpf_stats_enabled or a BPF_ENABLE_STATS fd).
  std::vector<Program> programs;
};

// Path scoring (collectors/scoring_collector.h, docs/scoring.md): filled
// once per window from the window's I/O deltas. The vocabularies are the
// exported label values.
inline constexpr std::array<absl::string_view, 3> kOpGroupNames = {
    "read", "write", "other"};
inline constexpr std::array<absl::string_view, 4> kPathHealthStates = {
    "healthy", "degraded", "failed", "idle"};

struct PathScoring {
  std::string health;  // one of kPathHealthStates
  // Per op group (kOpGroupNames): the latency EWMA (nullopt until the first
  // sample) and the weight (0-64).
  std::array<std::optional<double>, 3> latency_ewma_seconds;
  std::array<uint32_t, 3> weight = {0, 0, 0};
  // 100 x best usable sibling's EWMA / this path's, the lowest over op
  // groups; nullopt without evidence.
  std::optional<double> score;
  // Time since the path's last completed I/O; nullopt: none seen yet.
  std::optional<double> sample_age_seconds;
};

struct HeadScoring {
  std::array<int, 4> paths_by_state = {0, 0, 0, 0};  // kPathHealthStates
  // Worst usable EWMA over best (largest over op groups); nullopt with
  // fewer than two usable paths with an EWMA.
  std::optional<double> latency_imbalance_ratio;
};

struct Scoring {
  std::map<std::string, PathScoring, std::less<>> paths;  // by path name
  std::map<std::string, HeadScoring, std::less<>> heads;  // by head name
  // By subsystem name: the advisor's iopolicy (numa | round-robin |
  // queue-depth) and its one-line reason.
  std::map<std::string, std::pair<std::string, std::string>, std::less<>>
      iopolicy_recommended;
};

inline constexpr std::array<absl::string_view, 3> kRecommendedIopolicies = {
    "numa", "round-robin", "queue-depth"};

struct CollectorResult {
  std::string name;
  double duration_seconds = 0;
  bool success = false;
  std::string error;  // first error, "" on success
};

struct Snapshot {
  Topology topology;
  // Keyed by kernel block device name (path or head).
  std::map<std::string, IoStats, std::less<>> path_io;
  std::map<std::string, IoStats, std::less<>> head_io;
  // Where the I/O statistics come from: "sysfs" (stat files) or "bpf".
  // Empty when no I/O collector ran.
  std::string io_source;
  // BPF sampler only: per-path NVMe statistics (keyed by path name), I/O of
  // block devices outside the NVMe topology (keyed by disk name, filled with
  // --devices=all), and the sampler's own statistics.
  std::map<std::string, PathNvmeStats, std::less<>> path_nvme;
  std::map<std::string, IoStats, std::less<>> device_io;
  std::optional<SamplerStats> sampler;
  // Path scoring; nullopt when the scoring stage did not run.
  std::optional<Scoring> scoring;

  std::vector<CollectorResult> collectors;
  uint64_t topology_changes_total = 0;
  uint64_t generation = 0;  // 1 for the first collection
  absl::Time collected_at = absl::InfinitePast();

  bool AllCollectorsSucceeded() const;
};

// Natural ordering of kernel names: "nvme2" < "nvme10".
bool NaturalLess(absl::string_view a, absl::string_view b);

}  // namespace pathwise::model

#endif  // PATHWISE_MODEL_TOPOLOGY_H_

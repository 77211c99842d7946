// SPDX-License-Identifier: Apache-2.0
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
#include "model/actuation.h"
#include "model/histogram.h"
#include "model/queues.h"
#include "model/types.h"

namespace pathwise::model {

// The kernel's own diagnostic counters: the diag/ attribute group of a path,
// head or controller in sysfs. Each is nullopt when the running kernel does
// not have it (kernels before the group have no diag/ at all, and a PCIe
// controller has no reconnect_count); nothing is exported for it then. They
// count from the device's creation, and an admin may write any value to them
// (a counter reset, as Prometheus sees it).
struct PathDiag {
  std::optional<uint64_t> failovers;        // multipath_failover_count
  std::optional<uint64_t> command_retries;  // command_retries_count
  std::optional<uint64_t> command_errors;   // command_error_count
  friend bool operator==(const PathDiag&, const PathDiag&) = default;
};
struct HeadDiag {
  // io_requeue_no_usable_path_count: bios the head queued because no path
  // was usable (some path may come back).
  std::optional<uint64_t> requeued_no_usable_path;
  // io_fail_no_available_path_count: bios the head failed because no path
  // was left at all.
  std::optional<uint64_t> failed_no_available_path;
  friend bool operator==(const HeadDiag&, const HeadDiag&) = default;
};
struct ControllerDiag {
  std::optional<uint64_t> command_errors;  // command_error_count
  std::optional<uint64_t> resets;          // reset_count
  std::optional<uint64_t> reconnects;      // reconnect_count (fabrics only)
  friend bool operator==(const ControllerDiag&,
                         const ControllerDiag&) = default;
};

struct Subsystem {
  std::string name;  // nvme-subsys0
  std::string nqn;   // subsysnqn
  Iopolicy iopolicy = Iopolicy::kUnknown;
  // The kernel's iopolicy string when it is none of the known policies
  // ("" when known or not reported), shown verbatim.
  std::string unknown_iopolicy;
  std::string model;
  std::string serial;
};

// A multipath head: the visible block device (nvme0n1).
struct Head {
  std::string name;       // nvme0n1
  std::string subsystem;  // nvme-subsys0
  uint32_t nsid = 0;      // 0 if unknown
  std::optional<DevId> dev;
  HeadDiag diag;
};

// A path: the hidden per-controller block device (nvme0c1n1).
struct Path {
  std::string name;        // nvme0c1n1
  std::string subsystem;   // nvme-subsys0
  std::string head;        // nvme0n1
  std::string controller;  // nvme1
  // Unknown on kernels ≥ 5.15, which expose no dev_t for hidden disks.
  std::optional<DevId> dev;
  AnaState ana_state = AnaState::kUnknown;
  // The kernel's ana_state string when it is none of the known states (""
  // when known or not reported), shown verbatim.
  std::string unknown_ana_state;
  int numa_node = -1;  // the controller's NUMA node, -1 if none/unknown
  PathDiag diag;
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
  ControllerState state = ControllerState::kUnknown;
  // The kernel's state string when it is none of the known states (""
  // when known or not reported), shown verbatim.
  std::string unknown_state;
  std::string cntlid;  // decimal; "" if unknown
  int numa_node = -1;
  // Number of I/O queues: the kernel's queue_count minus the admin queue.
  std::optional<uint32_t> io_queues;
  ControllerDiag diag;
};

// Vectors are sorted by name in natural order (nvme2 before nvme10).
struct Topology {
  std::vector<Subsystem> subsystems;
  std::vector<Head> heads;
  std::vector<Path> paths;
  std::vector<Controller> controllers;
  // Whether <sysfs>/class/nvme-subsystem exists (nvme_core registers the
  // class when it loads). True for a topology not scanned from sysfs.
  bool subsystem_class = true;

  const Path* FindPath(absl::string_view name) const;
  const Controller* FindController(absl::string_view name) const;

  // Sorts every vector in natural name order.
  void Sort();

  bool empty() const {
    return subsystems.empty() && heads.empty() && paths.empty() &&
           controllers.empty();
  }
};

// Whether the host has NVMe multipath to watch: the NVMe subsystems seen
// and those with a multipath head, and when none has one, a one-line
// notice of what was found instead (a host without NVMe, or nvme_core
// with multipath=N, or only single-controller drives).
struct MultipathPresence {
  int subsystems = 0;
  int multipath_subsystems = 0;
  // "" when some subsystem has a multipath head; otherwise
  // "no NVMe multipath subsystems: is nvme_core loaded with multipath=Y?
  // (<what was found>)".
  std::string notice;
};
MultipathPresence Presence(const Topology& t);

// Whether two topologies differ in structure: the set of subsystems, heads,
// paths and controllers and how they relate (path → head, controller).
// State (ANA, controller state) and attributes are not structure.
bool StructureDiffers(const Topology& a, const Topology& b);

// Cumulative statistics of one operation class on one block device.
struct OpStats {
  uint64_t completed = 0;  // completed I/Os
  uint64_t bytes = 0;
  // Summed I/O time (sysfs), or summed issue-to-completion latency of the
  // `completed` I/Os (BPF sampler; the latency histogram's sum).
  uint64_t time_ns = 0;
  // BPF sampler only: completions with a non-zero block status, and the
  // latency of the `completed` I/Os (latency->Count() == completed).
  std::optional<uint64_t> errors;
  std::optional<LatencyHistogram> latency;

  // Exact sum of both (counters and histograms).
  void Merge(const OpStats& other);
  friend bool operator==(const OpStats&, const OpStats&) = default;
};

// Cumulative I/O statistics of one block device (a path or a head).
// This is the seam for the BPF sampler: it fills the same struct (and adds
// its histograms next to it) for the same devices.
struct IoStats {
  std::array<std::optional<OpStats>, kOpCount> ops;  // nullopt: not reported
  std::optional<uint64_t> inflight;

  std::optional<OpStats>& op(Op o) { return ops[Index(o)]; }
  const std::optional<OpStats>& op(Op o) const { return ops[Index(o)]; }
};

// Per-path NVMe completion statistics (BPF sampler only).
struct PathNvmeStats {
  // Completions with a non-zero NVMe status, indexed like
  // kNvmeErrorClasses. nullopt when nvme_complete_rq is not attached.
  std::optional<std::array<uint64_t, kNvmeErrorClassCount>> errors_by_class;
  uint64_t retries = 0;    // completions of retried commands
  uint64_t failovers = 0;  // requests failed over to another path
  friend bool operator==(const PathNvmeStats&, const PathNvmeStats&) = default;
};

// The BPF sampler's own statistics.
struct SamplerStats {
  // Events the kernel side could not account, by DropReason.
  std::array<uint64_t, kDropReasonCount> dropped{};
  struct Program {
    std::string name;  // kernel program name, e.g. pw_done_btf
    uint64_t run_time_ns = 0;
    uint64_t run_count = 0;
  };
  // Filled only while kernel program run statistics are collected
  // (kernel.bpf_stats_enabled or a BPF_ENABLE_STATS fd).
  std::vector<Program> programs;
  // The kernel does not run the programs while a thread of PID 1 is
  // current (a sandbox kernel patch): I/O completed in such a thread's
  // softirq is neither counted nor in `dropped`.
  bool init_context_hidden = false;
};

// Path scoring (scoring/stage.h, docs/scoring.md): filled
// once per window from the window's I/O deltas.
struct PathScoring {
  PathHealth health = PathHealth::kHealthy;
  // Per op group (indexed by OpGroup): the latency EWMA (nullopt until the
  // first sample) and the weight (0-64).
  std::array<std::optional<double>, kOpGroupCount> latency_ewma_seconds;
  std::array<uint32_t, kOpGroupCount> weight = {0, 0, 0};
  // 100 x best usable sibling's EWMA / this path's, the lowest over op
  // groups; nullopt without evidence.
  std::optional<double> score;
  // Time since the path's last completed I/O; nullopt: none seen yet.
  std::optional<double> sample_age_seconds;
};

struct HeadScoring {
  // Indexed by PathHealth.
  std::array<int, kPathHealthCount> paths_by_state = {0, 0, 0, 0};
  // Worst usable EWMA over best (largest over op groups); nullopt with
  // fewer than two usable paths with an EWMA.
  std::optional<double> latency_imbalance_ratio;
};

// The advisor's iopolicy for a subsystem and its one-line reason.
struct IopolicyRecommendation {
  Iopolicy iopolicy = Iopolicy::kUnknown;  // one of kAdvisedIopolicies
  std::string reason;
};

struct Scoring {
  std::map<std::string, PathScoring, std::less<>> paths;  // by path name
  std::map<std::string, HeadScoring, std::less<>> heads;  // by head name
  // By subsystem name.
  std::map<std::string, IopolicyRecommendation, std::less<>>
      iopolicy_recommended;
};

struct CollectorResult {
  std::string name;
  double duration_seconds = 0;
  bool success = false;
  std::string error;  // first error, "" on success
};

// One controller's probes (control/prober.h), cumulative since the prober
// first saw it.
struct ControllerProbeStats {
  // Probes that completed successfully within the timeout: their latency
  // (submission to completion) and its sum.
  LatencyHistogram latency;
  uint64_t latency_sum_ns = 0;
  // Failed probes, indexed by ProbeFailure.
  std::array<uint64_t, kProbeFailureCount> failures{};
  // Whether the controller is unreachable now: the last probe failed with
  // ProbeFailureMeansUnreachable, or one has been outstanding past its
  // timeout.
  bool unreachable = false;
  friend bool operator==(const ControllerProbeStats&,
                         const ControllerProbeStats&) = default;
};

// A controller's ANA log page as the prober read it (control/prober.h):
// only for controllers whose namespaces have no ANA state in sysfs (with
// nvme_core.multipath=N the kernel reads no ANA log and publishes none), so
// that this, not the kernel, is the source of their states.
struct ControllerAnaGroup {
  uint32_t id = 0;  // ANAGRPID
  AnaState state = AnaState::kUnknown;
  std::vector<uint32_t> nsids;
  friend bool operator==(const ControllerAnaGroup&,
                         const ControllerAnaGroup&) = default;
};
struct ControllerAnaLog {
  uint64_t change_count = 0;
  std::vector<ControllerAnaGroup> groups;     // of the last successful read
  absl::Time read_at = absl::InfinitePast();  // of the last successful read
  std::string error;  // why the last read failed; "" when it succeeded
  friend bool operator==(const ControllerAnaLog&,
                         const ControllerAnaLog&) = default;
};

// The I/O part of a snapshot: what the pipeline's I/O sources produce
// (collectors::IoSource), handed on to scoring and published as part of the
// Snapshot.
struct IoReading {
  // Keyed by kernel block device name (path or head).
  std::map<std::string, IoStats, std::less<>> path_io;
  std::map<std::string, IoStats, std::less<>> head_io;
  IoSource io_source = IoSource::kNone;
  // BPF sampler only: per-path NVMe statistics (keyed by path name), I/O of
  // block devices outside the NVMe topology (keyed by disk name, filled with
  // --devices=all), and the sampler's own statistics.
  std::map<std::string, PathNvmeStats, std::less<>> path_nvme;
  std::map<std::string, IoStats, std::less<>> device_io;
  std::optional<SamplerStats> sampler;
  // Controller probes, keyed by controller name; empty when probes are off.
  std::map<std::string, ControllerProbeStats, std::less<>> controller_probe;
  // The prober's ANA log page reads, keyed by controller name; only
  // controllers without ANA state in sysfs that report ANA.
  std::map<std::string, ControllerAnaLog, std::less<>> controller_ana;
  // The NVMe/TCP queue map (collectors/queue_source.h); --queues only.
  std::optional<QueueMap> queues;
};

// Whether the userspace datapath sends I/O to a path: usable, failed
// (failure handling took it out; probed until it answers) or ANA-unusable
// (its ANA state allows no I/O).
enum class DatapathPathState : uint8_t { kUsable, kFailed, kAnaUnusable };
inline constexpr std::array<DatapathPathState, 3> kAllDatapathPathStates = {
    DatapathPathState::kUsable, DatapathPathState::kFailed,
    DatapathPathState::kAnaUnusable};

// One path as the datapath's selector sees it.
struct DatapathPathReport {
  std::string path;         // the path's name (nvme1n1)
  uint64_t selections = 0;  // times the selector chose it (cumulative)
  DatapathPathState state = DatapathPathState::kUsable;
  bool probing = false;   // failed and being probed
  uint64_t inflight = 0;  // commands out on it over all queues
};

// The userspace datapath's decisions (`pathwise datapath`): its policy,
// the selector's choices and each path's state, and the block requests
// that had to wait for a usable path. Only the datapath's snapshots have
// one; counters are cumulative.
struct DatapathReport {
  std::string device;  // the ublk block device (ublkb0)
  std::string policy;  // as --policy spells it (policy::PolicyName)
  uint64_t requests = 0;
  uint64_t failed_requests = 0;
  uint64_t no_path_waits = 0;     // requests that waited for a usable path
  uint64_t no_path_timeouts = 0;  // ... and failed after the wait
  std::vector<DatapathPathReport> paths;  // in the datapath's path order
};

struct Snapshot : IoReading {
  Topology topology;
  // Path scoring; nullopt when the scoring stage did not run.
  std::optional<Scoring> scoring;
  // What the actuators did up to the previous collection (agent::Actuator::
  // Report); nullopt when no actuator is set up.
  std::optional<ActuatorReport> actuator;
  // The head iostats switch's report; nullopt unless --head-iostats is
  // dry-run or off.
  std::optional<HeadIostatsReport> head_iostats;
  // The userspace datapath's decisions; nullopt in the agent's snapshots.
  std::optional<DatapathReport> datapath;

  std::vector<CollectorResult> collectors;
  uint64_t topology_changes_total = 0;
  uint64_t generation = 0;  // 1 for the first collection
  absl::Time collected_at = absl::InfinitePast();

  bool AllCollectorsSucceeded() const;
};

// Natural ordering of kernel names: "nvme2" < "nvme10" (strverscmp(3)).
bool NaturalLess(absl::string_view a, absl::string_view b);

}  // namespace pathwise::model

#endif  // PATHWISE_MODEL_TOPOLOGY_H_

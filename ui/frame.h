// SPDX-License-Identifier: Apache-2.0
// One frame of `pathwise top`: what two successive snapshots say about each
// path, head, controller and subsystem over the interval between them.
// Pure: no terminal, no clock, no I/O; the renderers (ui/text.h, the JSON
// view, the curses front end) only lay it out.
#ifndef PATHWISE_UI_FRAME_H_
#define PATHWISE_UI_FRAME_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "model/topology.h"

namespace pathwise::ui {

// Rates of one op (read or write) over the interval.
struct OpWindow {
  double iops = 0;
  double mib_per_second = 0;
  // Quantiles of the interval's latency histogram (BPF sampler only), in
  // seconds; nullopt without a histogram or without I/O in the interval.
  std::optional<double> p50;
  std::optional<double> p99;
  // Mean latency over the interval (both sources); nullopt without I/O.
  std::optional<double> mean;
};

// A cumulative counter and how much of it fell into the interval; nullopt
// when no source reports it.
struct Count {
  uint64_t total = 0;
  uint64_t interval = 0;
};

struct PathRow {
  std::string subsystem;
  std::string head;
  std::string path;
  std::string controller;
  std::string transport;
  std::string address;    // traddr:trsvcid for fabrics, else the kernel's
  std::string ana_state;  // as the kernel spells it; "" unknown
  std::string controller_state;             // idem
  std::optional<model::PathHealth> health;  // nullopt without scoring
  OpWindow read;
  OpWindow write;
  std::optional<uint64_t> inflight;
  // Scoring: read/write EWMA (seconds) and weight (0-64).
  std::optional<double> ewma_read;
  std::optional<double> ewma_write;
  std::optional<uint32_t> weight_read;
  std::optional<uint32_t> weight_write;
  // Failovers: the kernel's multipath_failover_count where it has one,
  // else the eBPF sampler's. Errors: NVMe completions with an error status
  // (the sampler's, by class, summed), else the kernel's
  // command_error_count.
  std::optional<Count> failovers;
  std::optional<Count> errors;
  // The userspace datapath only (nullopt for an agent): whether it sends
  // I/O to the path ("usable", "failed", "failed probing",
  // "ana_unusable"), and the selector's choices of it with their share of
  // all its choices over the interval (0-1; nullopt without an interval or
  // without choices in it).
  std::optional<std::string> datapath_state;
  std::optional<Count> selections;
  std::optional<double> selection_share;
};

// The userspace datapath's device and policy, its block requests and the
// requests that had to wait for a usable path (`pathwise datapath`'s
// snapshot only).
struct DatapathLine {
  std::string device;
  std::string policy;
  int paths = 0;
  int usable = 0;  // paths it sends I/O to
  Count requests;
  Count failed_requests;
  Count no_path_waits;
  Count no_path_timeouts;
};

struct HeadRow {
  std::string subsystem;
  std::string head;
  int paths = 0;
  OpWindow read;
  OpWindow write;
  // Paths by health (model::PathHealth order); all 0 without scoring.
  std::array<int, model::kPathHealthCount> paths_by_health{};
  std::optional<double> imbalance;  // worst usable EWMA over best
};

struct ControllerRow {
  std::string subsystem;
  std::string controller;
  std::string transport;
  std::string address;
  std::string state;
  int paths = 0;
  double read_iops = 0;   // summed over its paths
  double write_iops = 0;  // idem
  // Controller probes over the interval (nullopt with probes off).
  std::optional<double> probe_p50;
  std::optional<double> probe_p99;
  std::optional<Count> probe_failures;
  bool unreachable = false;
  // The kernel's diag/ counters.
  std::optional<Count> resets;
  std::optional<Count> reconnects;
  std::optional<Count> errors;
};

// A block device outside the NVMe topology (--devices=all).
struct DeviceRow {
  std::string device;
  OpWindow read;
  OpWindow write;
};

struct SubsystemLine {
  std::string subsystem;
  std::string nqn;
  std::string iopolicy;     // as the kernel spells it
  std::string recommended;  // "" without scoring
  std::string reason;
  // The iopolicy actuator's last decision, one line ("" when none):
  // "dry_run round-robin -> queue-depth at 21:04:05Z: <reason>".
  std::string decision;
};

struct Frame {
  uint64_t generation = 0;
  absl::Time collected_at = absl::InfinitePast();
  double interval_seconds = 0;  // 0: one snapshot only (no rates yet)
  model::IoSource io_source = model::IoSource::kNone;
  // "collector <name>: <error>" for each stage that failed.
  std::vector<std::string> failed_collectors;
  // An agent's model::Presence notice: "" when some subsystem has a
  // multipath head (and for the datapath), else what the host has instead.
  std::string notice;
  std::vector<SubsystemLine> subsystems;
  std::optional<DatapathLine> datapath;  // nullopt for an agent
  std::vector<HeadRow> heads;
  std::vector<PathRow> paths;
  std::vector<ControllerRow> controllers;
  std::vector<DeviceRow> devices;
};

// The frame of `now` over the interval since `earlier` (nullptr, or not
// older than `now`: no interval, rates 0 and quantiles unknown). Rows come
// in natural name order (subsystem, head, path).
Frame BuildFrame(const model::Snapshot* earlier, const model::Snapshot& now);

// What the path and controller tables can be sorted by.
enum class SortKey : uint8_t {
  kName,       // subsystem, head, path (the tree's order)
  kHealth,     // failed, degraded, idle, healthy; then name
  kReadIops,   // highest first
  kWriteIops,  // highest first
  kReadP99,    // slowest first
  kWriteP99,   // slowest first
  kEwma,       // highest read EWMA first
  kErrors,     // most errors in the interval first
};
inline constexpr std::array<SortKey, 8> kAllSortKeys = {
    SortKey::kName,      SortKey::kHealth,  SortKey::kReadIops,
    SortKey::kWriteIops, SortKey::kReadP99, SortKey::kWriteP99,
    SortKey::kEwma,      SortKey::kErrors};
// The --sort spelling: name, health, riops, wiops, rp99, wp99, ewma, errors.
absl::string_view SortKeyName(SortKey k);
std::optional<SortKey> ParseSortKey(absl::string_view name);

// Sorts the paths (and the controllers, by the keys that apply to them;
// name otherwise) by `key`; ties by name.
void SortFrame(Frame& frame, SortKey key);

// Keeps the paths whose path, head, controller, subsystem or address
// contains `filter` (case-sensitive substring), the controllers whose
// name, subsystem or address does, the devices whose name does, and the
// heads and subsystems that still have a path. Empty: keeps all.
void FilterFrame(Frame& frame, absl::string_view filter);

}  // namespace pathwise::ui

#endif  // PATHWISE_UI_FRAME_H_

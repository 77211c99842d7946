// SPDX-License-Identifier: Apache-2.0
// Two successive snapshots for the ui/ tests, two seconds apart: the
// synthetic 2 subsystems x 1 head x 2 controllers topology with eBPF
// latency histograms, scoring (one degraded path), NVMe failovers and
// errors, kernel diag/ counters, controller probes (one unreachable), an
// actuator decision, a device outside NVMe and a failed collector.
#ifndef PATHWISE_TESTS_UNIT_UI_TEST_SNAPSHOTS_H_
#define PATHWISE_TESTS_UNIT_UI_TEST_SNAPSHOTS_H_

#include <utility>

#include "absl/time/time.h"
#include "model/synthetic.h"
#include "model/topology.h"

namespace pathwise::testing {

inline constexpr uint64_t kUs = 1000;
inline constexpr uint64_t kMs = 1000 * 1000;

// Adds `n` reads of `ns` each (4 KiB) to a path's read op, histogram
// included.
inline void AddReads(model::Snapshot& s, const std::string& path, uint64_t n,
                     uint64_t ns) {
  model::OpStats& op = *s.path_io[path].op(model::Op::kRead);
  op.completed += n;
  op.bytes += n * 4096;
  op.time_ns += n * ns;
  if (!op.latency) op.latency.emplace();
  op.latency->Observe(ns, n);
  if (!op.errors) op.errors = 0;
}

inline std::pair<model::Snapshot, model::Snapshot> MakeSnapshotPair() {
  model::Snapshot a = model::MakeSyntheticSnapshot({2, 1, 2});
  a.io_source = model::IoSource::kBpf;
  a.collected_at = absl::FromUnixSeconds(1790000000);
  a.generation = 41;
  // Histograms from the start, so that the window is a delta.
  for (auto& [name, io] : a.path_io) {
    model::OpStats& r = *io.op(model::Op::kRead);
    r.latency.emplace();
    r.latency->Observe(r.time_ns / std::max<uint64_t>(r.completed, 1),
                       r.completed);
    r.errors = 0;
  }
  a.path_nvme["nvme0c0n1"] = {std::array<uint64_t, 6>{}, 0, 1};
  a.path_nvme["nvme0c1n1"] = {std::array<uint64_t, 6>{}, 0, 0};
  a.topology.paths[2].diag.failovers = 7;  // nvme1c2n1: kernel diag
  a.topology.paths[2].diag.command_errors = 1;
  a.topology.controllers[0].diag = {2, 1, 0};
  a.controller_probe["nvme0"].latency.Observe(50 * kUs, 10);
  a.controller_probe["nvme0"].latency_sum_ns = 500 * kUs;
  a.controller_probe["nvme3"].latency.Observe(60 * kUs, 10);
  a.controller_probe["nvme3"].latency_sum_ns = 600 * kUs;
  a.device_io["loop0"].op(model::Op::kRead) = model::OpStats{100, 409600, 0};
  a.device_io["loop0"].op(model::Op::kWrite) = model::OpStats{0, 0, 0};

  model::Snapshot b = a;
  b.collected_at = a.collected_at + absl::Seconds(2);
  b.generation = 42;
  AddReads(b, "nvme0c0n1", 1000, 100 * kUs);  // fast
  AddReads(b, "nvme0c0n1", 1000, 2 * kMs);
  AddReads(b, "nvme0c1n1", 200, 30 * kMs);  // slow
  AddReads(b, "nvme1c2n1", 4000, 250 * kUs);
  b.path_io["nvme1c2n1"].op(model::Op::kWrite)->completed += 600;
  b.path_io["nvme1c2n1"].op(model::Op::kWrite)->bytes += 600 * 65536;
  b.path_io["nvme1c2n1"].op(model::Op::kWrite)->time_ns += 600 * kMs;
  b.path_nvme["nvme0c0n1"].failovers = 3;
  (*b.path_nvme["nvme0c1n1"].errors_by_class)[model::ErrorClassIndex(
      model::NvmeStatusClass::kPath)] = 5;
  b.topology.paths[2].diag.command_errors = 4;
  b.topology.controllers[0].diag = {2, 2, 1};
  b.controller_probe["nvme0"].latency.Observe(80 * kUs, 10);
  b.controller_probe["nvme0"].latency_sum_ns += 800 * kUs;
  b.controller_probe["nvme3"]
      .failures[model::Index(model::ProbeFailure::kTimeout)] = 2;
  b.controller_probe["nvme3"].unreachable = true;
  b.device_io["loop0"].op(model::Op::kRead)->completed += 5000;
  b.device_io["loop0"].op(model::Op::kRead)->bytes += 5000 * 4096;
  b.collectors.push_back({"probe", 0, false, "io_uring: no such device"});

  model::Scoring sc;
  for (const model::Path& p : b.topology.paths) {
    model::PathScoring& ps = sc.paths[p.name];
    ps.latency_ewma_seconds[0] = 0.00105;
    ps.weight = {32, 32, 32};
    ps.score = 100;
    ps.sample_age_seconds = 0.5;
  }
  sc.paths["nvme0c1n1"].health = model::PathHealth::kDegraded;
  sc.paths["nvme0c1n1"].latency_ewma_seconds[0] = 0.0301;
  sc.paths["nvme0c1n1"].weight = {2, 32, 32};
  sc.paths["nvme0c0n1"].weight = {62, 32, 32};
  sc.paths["nvme1c3n1"].health = model::PathHealth::kIdle;
  sc.paths["nvme1c3n1"].latency_ewma_seconds[0] = std::nullopt;
  sc.heads["nvme0n1"] = {{1, 1, 0, 0}, 28.7};
  sc.heads["nvme1n1"] = {{1, 0, 0, 1}, std::nullopt};
  sc.iopolicy_recommended["nvme-subsys0"] = {model::Iopolicy::kQueueDepth,
                                             "path nvme0c1n1 28.7x slower"};
  sc.iopolicy_recommended["nvme-subsys1"] = {model::Iopolicy::kNuma,
                                             "paths balanced"};
  b.scoring = sc;
  model::ActuatorReport rep;
  rep.mode = model::ActuateMode::kDryRun;
  rep.last_decision["nvme-subsys0"] = {model::Iopolicy::kRoundRobin,
                                       model::Iopolicy::kQueueDepth,
                                       model::DecisionResult::kDryRun,
                                       "advised for 30s",
                                       "",
                                       false,
                                       a.collected_at + absl::Seconds(1)};
  b.actuator = rep;
  return {std::move(a), std::move(b)};
}

}  // namespace pathwise::testing

#endif  // PATHWISE_TESTS_UNIT_UI_TEST_SNAPSHOTS_H_

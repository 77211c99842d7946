// SPDX-License-Identifier: Apache-2.0
#include "collectors/bpf_io_collector.h"

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "collectors/queue_hctx.h"
#include "model/types.h"
#include "spdlog/spdlog.h"

namespace pathwise::collectors {
namespace {

using OpMap = std::map<model::Op, model::OpStats>;

// Read and write always (zero until the device does I/O), other ops once
// seen.
model::IoStats ToModel(const OpMap& ops) {
  model::OpStats zero;
  zero.errors = 0;
  zero.latency.emplace();
  model::IoStats io;
  io.op(model::Op::kRead) = zero;
  io.op(model::Op::kWrite) = zero;
  for (const auto& [op, stats] : ops) io.op(op) = stats;
  return io;
}

}  // namespace

bool IsNvmePathDiskName(absl::string_view name) {
  return model::ParseNvmePathName(name).has_value();
}

void JoinBpfSamples(const bpf::SamplerSnapshot& samples, DeviceScope scope,
                    const model::Topology& topo, model::IoReading& io) {
  // Sum by disk name. The sampler keys every disk instance by (dev_t,
  // diskseq) with the name it had, so a disk that reuses the dev_t of one
  // that left counts under its own name only. A name may have had several
  // instances over time (a path deleted and re-created, a loop device
  // re-attached): their sum (live entries plus the retired tally of the
  // gone ones) keeps the name's counters monotonic.
  std::map<std::string, OpMap, std::less<>> by_name;
  for (const bpf::DeviceIo& d : samples.io) {
    const std::string name = d.disk.empty() ? model::ToString(d.dev) : d.disk;
    by_name[name][d.op].Merge(d.stats);
  }

  std::map<std::string, const model::Path*, std::less<>> paths;
  for (const model::Path& p : topo.paths) paths[p.name] = &p;

  // Per path; heads are the exact merge of their paths.
  std::map<std::string, OpMap, std::less<>> heads;
  for (const model::Head& h : topo.heads) heads[h.name];
  const OpMap none;
  for (const model::Path& p : topo.paths) {
    auto it = by_name.find(p.name);
    const OpMap& ops = it == by_name.end() ? none : it->second;
    io.path_io[p.name] = ToModel(ops);
    if (auto h = heads.find(p.head); h != heads.end()) {
      for (const auto& [op, stats] : ops) h->second[op].Merge(stats);
    }
  }
  // ... and of the paths they had that have left (a controller deleted):
  // the sampler keeps those counts, and a head that dropped them would see
  // its counters go backwards while it still exists.
  for (const auto& [name, ops] : by_name) {
    if (paths.contains(name)) continue;
    const std::optional<model::NvmePathName> path =
        model::ParseNvmePathName(name);
    if (!path) continue;
    if (auto h = heads.find(model::HeadName(*path)); h != heads.end()) {
      for (const auto& [op, stats] : ops) h->second[op].Merge(stats);
    }
  }
  for (const auto& [name, ops] : heads) {
    io.head_io[name] = ToModel(ops);
  }

  // Other block devices. Hidden NVMe path disks that left the topology
  // (a deleted controller) are not "devices", nor are heads.
  if (scope == DeviceScope::kAll) {
    for (const auto& [name, ops] : by_name) {
      if (paths.contains(name) || heads.contains(name) ||
          IsNvmePathDiskName(name)) {
        continue;
      }
      io.device_io[name] = ToModel(ops);
    }
  }

  // NVMe statistics per path. Error classes only while nvme_complete_rq
  // is attached: without it they are unknown, not zero.
  std::map<std::string, model::PathNvmeStats, std::less<>> nvme;
  const bool have_status =
      samples.nvme_state == bpf::NvmeAttachState::kAttached;
  for (const model::Path& p : topo.paths) {
    model::PathNvmeStats& s = nvme[p.name];
    if (have_status) s.errors_by_class.emplace();
  }
  for (const bpf::PathSample& ps : samples.paths) {
    auto it = nvme.find(ps.disk);
    if (it == nvme.end()) continue;
    model::PathNvmeStats& s = it->second;
    s.retries += ps.stats.retries;
    s.failovers += ps.stats.failovers;
    if (s.errors_by_class && ps.stats.errors_by_class) {
      for (size_t i = 0; i < model::kNvmeErrorClassCount; ++i) {
        (*s.errors_by_class)[i] += (*ps.stats.errors_by_class)[i];
      }
    }
  }
  for (auto& [name, s] : nvme) io.path_nvme[name] = std::move(s);

  model::SamplerStats st;
  st.dropped = samples.dropped;
  st.init_context_hidden = samples.init_context_hidden;
  if (samples.bpf_stats_enabled) {
    for (const bpf::ProgramStats& p : samples.programs) {
      st.programs.push_back({p.name, p.run_time_ns, p.run_count});
    }
  }
  io.sampler = std::move(st);
  io.io_source = model::IoSource::kBpf;
}

absl::Status BpfIoCollector::Read(const model::Topology& topology,
                                  model::IoReading& io) {
  absl::StatusOr<bpf::SamplerSnapshot> samples = sampler_->Read();
  if (!samples.ok()) {
    io.io_source = model::IoSource::kBpf;
    return samples.status();
  }
  if (samples->nvme_state != nvme_state_) {
    nvme_state_ = samples->nvme_state;
    switch (nvme_state_) {
      case bpf::NvmeAttachState::kAttached:
        spdlog::info("eBPF: nvme_complete_rq attached (NVMe status, retries)");
        break;
      case bpf::NvmeAttachState::kUnavailable:
        spdlog::warn("eBPF: no NVMe status/retries: {}",
                     samples->nvme_status_message);
        break;
      default:
        break;
    }
  }
  JoinBpfSamples(*samples, scope_, topology, io);
  if (samples->hctx_on) {
    // Handed to the queue map's source, which runs after this one.
    model::QueueMap& q = io.queues.emplace();
    q.hctx_io = true;
    q.path_hctx = HctxByPath(*samples);
    q.hctx_dropped = samples->dropped_hctx;
  }
  return absl::OkStatus();
}

}  // namespace pathwise::collectors

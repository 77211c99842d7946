#include "collectors/bpf_io_collector.h"

#include <array>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace pathwise::collectors {
namespace {

using OpMap = std::map<model::Op, bpf::IoStats>;

std::shared_ptr<const std::vector<double>> Bounds() {
  auto b = std::make_shared<std::vector<double>>();
  b->reserve(bpf::LatencyHistogram::kBuckets);
  for (size_t i = 0; i < bpf::LatencyHistogram::kBuckets; ++i) {
    b->push_back(bpf::LatencyHistogram::UpperBoundSeconds(i));
  }
  return b;
}

model::OpStats ToModel(const bpf::IoStats& s,
                       const std::shared_ptr<const std::vector<double>>& b) {
  model::OpStats o;
  o.completed = s.completed;
  o.bytes = s.bytes;
  o.time_ns = s.latency_sum_ns;
  o.errors = s.errors;
  model::Histogram h;
  h.upper_bounds = b;
  h.counts.assign(s.latency.buckets().begin(), s.latency.buckets().end());
  h.sum_seconds = static_cast<double>(s.latency_sum_ns) / 1e9;
  o.latency = std::move(h);
  return o;
}

// Read and write always, other ops once seen.
model::IoStats ToModel(const OpMap& ops,
                       const std::shared_ptr<const std::vector<double>>& b) {
  model::IoStats io;
  io.op(model::Op::kRead) = ToModel(bpf::IoStats{}, b);
  io.op(model::Op::kWrite) = ToModel(bpf::IoStats{}, b);
  for (const auto& [op, stats] : ops) io.op(op) = ToModel(stats, b);
  return io;
}

}  // namespace

bool IsNvmePathDiskName(absl::string_view name) {
  // nvme<digits>c<digits>n<digits>
  auto digits = [&](size_t& i) {
    const size_t from = i;
    while (i < name.size() && absl::ascii_isdigit(name[i])) ++i;
    return i > from;
  };
  if (name.substr(0, 4) != "nvme") return false;
  size_t i = 4;
  if (!digits(i) || i >= name.size() || name[i++] != 'c') return false;
  if (!digits(i) || i >= name.size() || name[i++] != 'n') return false;
  return digits(i) && i == name.size();
}

model::Op ToModelOp(bpf::Op op) {
  const std::string_view name = bpf::OpName(op);
  for (int i = 0; i < model::kOpCount; ++i) {
    if (model::kOpNames[i] == absl::string_view(name.data(), name.size())) {
      return static_cast<model::Op>(i);
    }
  }
  return model::Op::kOther;
}

void JoinBpfSamples(const bpf::SamplerSnapshot& samples, DeviceScope scope,
                    const model::Topology& topo, IoReading& io) {
  const std::shared_ptr<const std::vector<double>> bounds = Bounds();

  // Sum by disk name: a name may have had several dev_t over time (a path
  // deleted and re-created); its counters stay monotonic.
  std::map<std::string, OpMap, std::less<>> by_name;
  for (const bpf::DeviceIo& d : samples.io) {
    const std::string name = d.disk.empty() ? d.dev.ToString() : d.disk;
    by_name[name][ToModelOp(d.op)].Merge(d.stats);
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
    io.path_io[p.name] = ToModel(ops, bounds);
    if (auto h = heads.find(p.head); h != heads.end()) {
      for (const auto& [op, stats] : ops) h->second[op].Merge(stats);
    }
  }
  for (const auto& [name, ops] : heads) {
    io.head_io[name] = ToModel(ops, bounds);
  }

  // Other block devices. Hidden NVMe path disks that left the topology
  // (a deleted controller) are not "devices", nor are heads.
  if (scope == DeviceScope::kAll) {
    for (const auto& [name, ops] : by_name) {
      if (paths.contains(name) || heads.contains(name) ||
          IsNvmePathDiskName(name)) {
        continue;
      }
      io.device_io[name] = ToModel(ops, bounds);
    }
  }

  // NVMe statistics per path.
  std::map<std::string, model::PathNvmeStats, std::less<>> nvme;
  const bool have_status =
      samples.nvme_state == bpf::NvmeAttachState::kAttached;
  for (const model::Path& p : topo.paths) {
    model::PathNvmeStats& s = nvme[p.name];
    if (have_status) {
      for (bpf::NvmeStatusClass c : bpf::kNvmeErrorClasses) {
        s.errors_by_class.emplace_back(std::string(bpf::NvmeStatusClassName(c)),
                                       0);
      }
    }
  }
  for (const bpf::PathNvmeStats& ps : samples.paths) {
    auto it = nvme.find(ps.disk);
    if (it == nvme.end()) continue;
    model::PathNvmeStats& s = it->second;
    s.retries += ps.retries;
    s.failovers += ps.failovers;
    for (size_t i = 0; i < s.errors_by_class.size(); ++i) {
      s.errors_by_class[i].second += ps.errors_by_class[i];
    }
  }
  for (auto& [name, s] : nvme) io.path_nvme[name] = std::move(s);

  model::SamplerStats st;
  for (bpf::DropReason r : bpf::kAllDropReasons) {
    st.dropped.emplace_back(std::string(bpf::DropReasonName(r)),
                            samples.dropped[static_cast<size_t>(r)]);
  }
  if (samples.bpf_stats_enabled) {
    for (const bpf::ProgramStats& p : samples.programs) {
      st.programs.push_back({p.name, p.run_time_ns, p.run_count});
    }
  }
  io.sampler = std::move(st);
  io.io_source = "bpf";
}

absl::Status BpfIoCollector::Read(const model::Topology& topology,
                                  IoReading& io) {
  absl::StatusOr<bpf::SamplerSnapshot> samples = sampler_->Read();
  if (!samples.ok()) {
    io.io_source = "bpf";
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
  return absl::OkStatus();
}

}  // namespace pathwise::collectors

#include "exporters/prometheus_families.h"

#include <initializer_list>
#include <sstream>
#include <utility>

#include "exporters/labels.h"
#include "prometheus/text_serializer.h"

namespace pathwise::exporters {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

using Labels = std::vector<ClientMetric::Label>;

MetricFamily Family(std::string name, std::string help, MetricType type) {
  MetricFamily f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = type;
  return f;
}

void AddGauge(MetricFamily& f, Labels labels, double value) {
  ClientMetric m;
  m.label = std::move(labels);
  m.gauge.value = value;
  f.metric.push_back(std::move(m));
}

void AddCounter(MetricFamily& f, Labels labels, double value) {
  ClientMetric m;
  m.label = std::move(labels);
  m.counter.value = value;
  f.metric.push_back(std::move(m));
}

Labels With(Labels base, std::initializer_list<ClientMetric::Label> more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

void Push(std::vector<MetricFamily>& out, MetricFamily f) {
  if (!f.metric.empty()) out.push_back(std::move(f));
}

void AddHistogram(MetricFamily& f, Labels labels,
                  const model::LatencyHistogram& h, double sum_seconds) {
  ClientMetric m;
  m.label = std::move(labels);
  const auto cumulative = h.Cumulative();
  m.histogram.sample_count = cumulative.back();
  m.histogram.sample_sum = sum_seconds;
  for (size_t i = 0; i < cumulative.size(); ++i) {
    m.histogram.bucket.push_back(
        {cumulative[i], model::LatencyHistogram::UpperBoundSeconds(i)});
  }
  f.metric.push_back(std::move(m));
}

// The I/O families of one device kind ("path", "head" or "device"): the
// four fallback counters, and from the BPF sampler the latency histogram
// and (for "device") block-layer errors.
struct IoFamilies {
  MetricFamily completed, bytes, time, inflight, latency, errors;

  explicit IoFamilies(const std::string& kind)
      : completed(Family("pathwise_" + kind + "_io_completed_total",
                         "Completed I/Os of the " + kind + " by operation.",
                         MetricType::Counter)),
        bytes(Family("pathwise_" + kind + "_io_bytes_total",
                     "Bytes transferred by completed I/Os of the " + kind +
                         " by operation.",
                     MetricType::Counter)),
        time(Family(
            "pathwise_" + kind + "_io_time_seconds_total",
            "Summed time of completed I/Os of the " + kind + " by operation.",
            MetricType::Counter)),
        inflight(Family("pathwise_" + kind + "_io_inflight",
                        "I/Os of the " + kind + " issued but not completed.",
                        MetricType::Gauge)),
        latency(Family("pathwise_" + kind + "_io_latency_seconds",
                       "Latency of completed I/Os of the " + kind +
                           " from issue to the device to completion, by "
                           "operation (eBPF sampler).",
                       MetricType::Histogram)),
        errors(Family("pathwise_" + kind + "_io_errors_total",
                      "Completed I/Os of the " + kind +
                          " with a block-layer error, by operation (eBPF "
                          "sampler).",
                      MetricType::Counter)),
        with_errors_(kind == "device") {}

  void Add(const Labels& labels, const model::IoStats& io) {
    for (model::Op o : kOpExportOrder) {
      const std::optional<model::OpStats>& op = io.op(o);
      if (!op) continue;
      Labels l = With(labels, {{"op", std::string(OpLabel(o))}});
      AddCounter(completed, l, static_cast<double>(op->completed));
      AddCounter(bytes, l, static_cast<double>(op->bytes));
      AddCounter(time, l, static_cast<double>(op->time_ns) / 1e9);
      if (op->latency) {
        AddHistogram(latency, l, *op->latency,
                     static_cast<double>(op->time_ns) / 1e9);
      }
      if (with_errors_ && op->errors) {
        AddCounter(errors, l, static_cast<double>(*op->errors));
      }
    }
    if (io.inflight) {
      AddGauge(inflight, labels, static_cast<double>(*io.inflight));
    }
  }

  void MoveTo(std::vector<MetricFamily>& out) {
    Push(out, std::move(completed));
    Push(out, std::move(bytes));
    Push(out, std::move(time));
    Push(out, std::move(inflight));
    Push(out, std::move(latency));
    Push(out, std::move(errors));
  }

 private:
  bool with_errors_;
};

void AddScoringFamilies(const model::Topology& topo,
                        const model::Scoring& scoring,
                        std::vector<MetricFamily>& out) {
  MetricFamily ewma =
      Family("pathwise_path_latency_ewma_seconds",
             "EWMA of a path's mean completion latency per window, by op group "
             "(read, write, other); see docs/scoring.md.",
             MetricType::Gauge);
  MetricFamily weight = Family(
      "pathwise_path_weight",
      "Weight of a path among its head's usable paths by op group, 0-64: "
      "64 x (1/EWMA) / sum of the siblings' (1/EWMA), at least 1 when usable, "
      "0 when not.",
      MetricType::Gauge);
  MetricFamily score = Family(
      "pathwise_path_score",
      "100 x the best usable sibling's latency EWMA / this path's (100 = the "
      "best path), the lowest over op groups.",
      MetricType::Gauge);
  MetricFamily health = Family(
      "pathwise_path_health",
      "Health of a path as a StateSet (healthy, degraded, failed, idle): 1 "
      "for the current state, 0 for the others.",
      MetricType::Gauge);
  MetricFamily age =
      Family("pathwise_path_sample_age_seconds",
             "Time since the last window in which the path completed an I/O.",
             MetricType::Gauge);
  for (const model::Path& p : topo.paths) {
    auto it = scoring.paths.find(p.name);
    if (it == scoring.paths.end()) continue;
    const model::PathScoring& ps = it->second;
    const Labels base = {{"subsystem", p.subsystem},
                         {"head", p.head},
                         {"path", p.name},
                         {"controller", p.controller}};
    for (model::OpGroup group : model::kAllOpGroups) {
      const size_t g = model::Index(group);
      const Labels l =
          With(base, {{"op_group", std::string(OpGroupLabel(group))}});
      if (ps.latency_ewma_seconds[g]) {
        AddGauge(ewma, l, *ps.latency_ewma_seconds[g]);
      }
      AddGauge(weight, l, ps.weight[g]);
    }
    if (ps.score) AddGauge(score, base, *ps.score);
    for (model::PathHealth st : model::kAllPathHealth) {
      AddGauge(health,
               With(base, {{"state", std::string(PathHealthLabel(st))}}),
               ps.health == st ? 1 : 0);
    }
    if (ps.sample_age_seconds) AddGauge(age, base, *ps.sample_age_seconds);
  }
  Push(out, std::move(ewma));
  Push(out, std::move(weight));
  Push(out, std::move(score));
  Push(out, std::move(health));
  Push(out, std::move(age));

  MetricFamily head_paths =
      Family("pathwise_head_paths", "Paths of a head by health state.",
             MetricType::Gauge);
  MetricFamily imbalance = Family(
      "pathwise_head_latency_imbalance_ratio",
      "Worst usable path's latency EWMA over the best's (the largest over op "
      "groups); 1 = balanced.",
      MetricType::Gauge);
  for (const model::Head& h : topo.heads) {
    auto it = scoring.heads.find(h.name);
    if (it == scoring.heads.end()) continue;
    for (model::PathHealth st : model::kAllPathHealth) {
      AddGauge(head_paths,
               {{"subsystem", h.subsystem},
                {"head", h.name},
                {"state", std::string(PathHealthLabel(st))}},
               it->second.paths_by_state[model::Index(st)]);
    }
    if (it->second.latency_imbalance_ratio) {
      AddGauge(imbalance, {{"subsystem", h.subsystem}, {"head", h.name}},
               *it->second.latency_imbalance_ratio);
    }
  }
  Push(out, std::move(head_paths));
  Push(out, std::move(imbalance));

  MetricFamily advised = Family(
      "pathwise_subsystem_iopolicy_recommended",
      "The iopolicy the evidence favours for a subsystem now, as a StateSet "
      "(numa, round-robin, queue-depth); pathwise does not change it.",
      MetricType::Gauge);
  for (const model::Subsystem& s : topo.subsystems) {
    auto it = scoring.iopolicy_recommended.find(s.name);
    if (it == scoring.iopolicy_recommended.end()) continue;
    for (model::Iopolicy pol : model::kAdvisedIopolicies) {
      AddGauge(advised,
               {{"subsystem", s.name},
                {"iopolicy", std::string(IopolicyLabel(pol))}},
               it->second.iopolicy == pol ? 1 : 0);
    }
  }
  Push(out, std::move(advised));
}

}  // namespace

std::vector<MetricFamily> BuildFamilies(const model::Snapshot* snapshot,
                                        const BuildInfo& build) {
  std::vector<MetricFamily> out;

  MetricFamily build_info = Family(
      "pathwise_build_info",
      "A metric with a constant '1' value labeled by version and revision of "
      "pathwise.",
      MetricType::Gauge);
  AddGauge(build_info,
           {{"version", build.version}, {"revision", build.revision}}, 1);
  out.push_back(std::move(build_info));
  if (snapshot == nullptr) return out;
  const model::Topology& topo = snapshot->topology;

  // --- Agent self-metrics (always present once a collection ran).
  MetricFamily duration =
      Family("pathwise_collector_duration_seconds",
             "Duration of the last run of a collector.", MetricType::Gauge);
  MetricFamily success = Family(
      "pathwise_collector_success",
      "Whether a collector's last run read all of its inputs (1) or not (0).",
      MetricType::Gauge);
  for (const model::CollectorResult& r : snapshot->collectors) {
    AddGauge(duration, {{"collector", r.name}}, r.duration_seconds);
    AddGauge(success, {{"collector", r.name}}, r.success ? 1 : 0);
  }
  out.push_back(std::move(duration));
  out.push_back(std::move(success));

  MetricFamily sampler =
      Family("pathwise_sampler_info",
             "Where the I/O statistics come from: sysfs stat files or the eBPF "
             "sampler.",
             MetricType::Gauge);
  if (!snapshot->io_source.empty()) {
    AddGauge(sampler, {{"source", snapshot->io_source}}, 1);
  }
  Push(out, std::move(sampler));

  MetricFamily changes = Family(
      "pathwise_topology_changes_total",
      "Times a rescan found subsystems, heads, paths or controllers added, "
      "removed or re-linked.",
      MetricType::Counter);
  AddCounter(changes, {},
             static_cast<double>(snapshot->topology_changes_total));
  out.push_back(std::move(changes));

  // --- Topology.
  MetricFamily sub_info = Family(
      "pathwise_subsystem_info",
      "NVMe subsystems with their NQN, multipath I/O policy, model and serial.",
      MetricType::Gauge);
  for (const model::Subsystem& s : topo.subsystems) {
    AddGauge(sub_info,
             {{"subsystem", s.name},
              {"nqn", s.nqn},
              {"iopolicy", std::string(IopolicyText(s))},
              {"model", s.model},
              {"serial", s.serial}},
             1);
  }
  Push(out, std::move(sub_info));

  MetricFamily head_info =
      Family("pathwise_head_info",
             "Multipath heads (the visible namespace block devices).",
             MetricType::Gauge);
  for (const model::Head& h : topo.heads) {
    AddGauge(head_info,
             {{"subsystem", h.subsystem},
              {"head", h.name},
              {"nsid", h.nsid ? std::to_string(h.nsid) : std::string()}},
             1);
  }
  Push(out, std::move(head_info));

  MetricFamily path_info =
      Family("pathwise_path_info",
             "Paths (hidden per-controller block devices) with their head and "
             "controller.",
             MetricType::Gauge);
  MetricFamily ana = Family(
      "pathwise_path_ana_state",
      "ANA state of a path as a StateSet: 1 for the current state, 0 for the "
      "others.",
      MetricType::Gauge);
  IoFamilies path_io("path");
  for (const model::Path& p : topo.paths) {
    const model::Controller* c = topo.FindController(p.controller);
    const std::string transport = c ? c->transport : "";
    const std::string address = c ? c->address : "";
    AddGauge(path_info,
             {{"subsystem", p.subsystem},
              {"head", p.head},
              {"path", p.name},
              {"controller", p.controller},
              {"transport", transport},
              {"address", address}},
             1);
    const Labels base = {{"subsystem", p.subsystem},
                         {"head", p.head},
                         {"path", p.name},
                         {"controller", p.controller}};
    if (!AnaStateText(p).empty()) {
      for (model::AnaState st : model::kAllAnaStates) {
        AddGauge(ana, With(base, {{"state", std::string(AnaStateLabel(st))}}),
                 p.ana_state == st ? 1 : 0);
      }
    }
    if (auto it = snapshot->path_io.find(p.name);
        it != snapshot->path_io.end()) {
      path_io.Add(base, it->second);
    }
  }
  Push(out, std::move(path_info));
  Push(out, std::move(ana));

  MetricFamily ctrl_state = Family(
      "pathwise_controller_state",
      "State of a controller as a StateSet: 1 for the current state, 0 for "
      "the others.",
      MetricType::Gauge);
  MetricFamily ctrl_info = Family(
      "pathwise_controller_info",
      "NVMe controllers with their subsystem, transport, address and cntlid.",
      MetricType::Gauge);
  MetricFamily ctrl_queues =
      Family("pathwise_controller_io_queues",
             "Number of I/O queues of a controller (admin queue excluded).",
             MetricType::Gauge);
  for (const model::Controller& c : topo.controllers) {
    if (!ControllerStateText(c).empty()) {
      const model::ControllerState member = model::StateSetMember(c.state);
      for (model::ControllerState st : model::kControllerStateSet) {
        AddGauge(ctrl_state,
                 {{"controller", c.name},
                  {"state", std::string(ControllerStateLabel(st))}},
                 member == st ? 1 : 0);
      }
    }
    AddGauge(ctrl_info,
             {{"controller", c.name},
              {"subsystem", c.subsystem},
              {"transport", c.transport},
              {"address", c.address},
              {"cntlid", c.cntlid}},
             1);
    if (c.io_queues) {
      AddGauge(ctrl_queues, {{"controller", c.name}},
               static_cast<double>(*c.io_queues));
    }
  }
  Push(out, std::move(ctrl_state));
  Push(out, std::move(ctrl_info));
  Push(out, std::move(ctrl_queues));

  path_io.MoveTo(out);

  IoFamilies head_io("head");
  for (const model::Head& h : topo.heads) {
    if (auto it = snapshot->head_io.find(h.name);
        it != snapshot->head_io.end()) {
      head_io.Add({{"subsystem", h.subsystem}, {"head", h.name}}, it->second);
    }
  }
  head_io.MoveTo(out);

  // --- Path scoring (collectors/scoring_collector.h, docs/scoring.md).
  if (snapshot->scoring) AddScoringFamilies(topo, *snapshot->scoring, out);

  // --- eBPF sampler: per-path NVMe statistics.
  MetricFamily nvme_errors = Family(
      "pathwise_path_io_errors_total",
      "Completions of a path with a non-zero NVMe status, by status class "
      "(status code type; eBPF sampler, nvme_complete_rq).",
      MetricType::Counter);
  MetricFamily retries =
      Family("pathwise_path_io_retries_total",
             "Completions of retried NVMe commands on a path (eBPF sampler).",
             MetricType::Counter);
  MetricFamily failovers = Family(
      "pathwise_path_failovers_total",
      "Requests of a path that the kernel failed over to another path; not "
      "counted as I/Os of this path (eBPF sampler).",
      MetricType::Counter);
  for (const model::Path& p : topo.paths) {
    auto it = snapshot->path_nvme.find(p.name);
    if (it == snapshot->path_nvme.end()) continue;
    const Labels base = {{"subsystem", p.subsystem},
                         {"head", p.head},
                         {"path", p.name},
                         {"controller", p.controller}};
    if (const auto& errors = it->second.errors_by_class) {
      for (model::NvmeStatusClass cls : model::kNvmeErrorClasses) {
        AddCounter(nvme_errors,
                   With(base, {{"status_class",
                                std::string(NvmeStatusClassLabel(cls))}}),
                   static_cast<double>((*errors)[model::ErrorClassIndex(cls)]));
      }
    }
    AddCounter(retries, base, static_cast<double>(it->second.retries));
    AddCounter(failovers, base, static_cast<double>(it->second.failovers));
  }
  Push(out, std::move(nvme_errors));
  Push(out, std::move(retries));
  Push(out, std::move(failovers));

  // --- eBPF sampler: other block devices (--devices=all).
  IoFamilies device_io("device");
  for (const auto& [name, io] : snapshot->device_io) {
    device_io.Add({{"device", name}}, io);
  }
  device_io.MoveTo(out);

  // --- eBPF sampler: its own statistics.
  if (snapshot->sampler) {
    MetricFamily dropped =
        Family("pathwise_bpf_events_dropped_total",
               "Events the eBPF sampler could not account, by reason.",
               MetricType::Counter);
    for (model::DropReason reason : model::kAllDropReasons) {
      AddCounter(dropped, {{"reason", std::string(DropReasonLabel(reason))}},
                 static_cast<double>(
                     snapshot->sampler->dropped[model::Index(reason)]));
    }
    Push(out, std::move(dropped));
    MetricFamily run_seconds = Family(
        "pathwise_bpf_program_run_seconds_total",
        "Time the kernel spent running a pathwise BPF program (only while "
        "kernel.bpf_stats_enabled is on; see --bpf_stats).",
        MetricType::Counter);
    MetricFamily runs = Family(
        "pathwise_bpf_program_runs_total",
        "Runs of a pathwise BPF program (only while kernel.bpf_stats_enabled "
        "is on; see --bpf_stats).",
        MetricType::Counter);
    for (const model::SamplerStats::Program& p : snapshot->sampler->programs) {
      AddCounter(run_seconds, {{"program", p.name}},
                 static_cast<double>(p.run_time_ns) / 1e9);
      AddCounter(runs, {{"program", p.name}}, static_cast<double>(p.run_count));
    }
    Push(out, std::move(run_seconds));
    Push(out, std::move(runs));
  }
  return out;
}

std::vector<MetricFamily> SnapshotCollectable::Collect() const {
  std::shared_ptr<const model::Snapshot> snap = store_.Load();
  return BuildFamilies(snap.get(), build_);
}

std::string SerializeText(const std::vector<MetricFamily>& families) {
  std::ostringstream os;
  prometheus::TextSerializer().Serialize(os, families);
  return os.str();
}

}  // namespace pathwise::exporters

// SPDX-License-Identifier: Apache-2.0
#include "datapath/exposition.h"

#include <filesystem>
#include <fstream>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "collectors/kernel_strings.h"
#include "exporters/labels.h"
#include "exporters/prometheus_internal.h"
#include "exporters/prometheus_protobuf.h"

namespace pathwise::datapath {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Labels = std::vector<ClientMetric::Label>;

using exporters::internal::AddCounter;
using exporters::internal::AddGauge;
using exporters::internal::Family;

// A sample of `f`, as a counter or a gauge by the family's type.
void Add(MetricFamily& f, Labels labels, double value) {
  if (f.type == MetricType::Counter) {
    AddCounter(f, std::move(labels), value);
  } else {
    AddGauge(f, std::move(labels), value);
  }
}

// The agent's path label set (exporters' PathLabels), in its order.
Labels PathLabels(const model::Path& p) {
  return {{"subsystem", p.subsystem},
          {"head", p.head},
          {"path", p.name},
          {"controller", p.controller}};
}

// The first line of a sysfs attribute; "" (and `*ok` false) when
// unreadable.
std::string ReadAttr(const std::filesystem::path& file, bool* ok) {
  std::ifstream in(file);
  std::string line;
  if (!in || !std::getline(in, line)) {
    *ok = false;
    return "";
  }
  return std::string(absl::StripAsciiWhitespace(line));
}

// The nvme-subsystem entry holding `controller` (with multipath off too,
// every controller sits under its subsystem's directory).
std::string SubsystemOf(const std::filesystem::path& sysfs,
                        const std::string& controller) {
  std::error_code ec;
  const std::filesystem::path dir = sysfs / "class/nvme-subsystem";
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (std::filesystem::exists(e.path() / controller, ec)) {
      return e.path().filename().string();
    }
  }
  return "";
}

// The pathwise selector's scoring as the agent's scoring stage publishes
// it: the scorer's paths (keyed by index) under the paths' names, with the
// weights the selector holds; nullopt for the other policies and before
// the first window was scored.
std::optional<model::Scoring> SelectorScoring(const DatapathView& view) {
  const SelectorView& sel = view.selector;
  if (!sel.scorer || sel.scorer->windows() == 0) return std::nullopt;
  model::Scoring out;
  const double window_s = static_cast<double>(sel.window_ns) / 1e9;
  for (const scoring::PathScore& ps : sel.scorer->paths()) {
    size_t i = 0;
    if (!absl::SimpleAtoi(ps.path, &i) || i >= view.group.paths.size()) {
      continue;
    }
    model::PathScoring m = scoring::ToModel(ps, window_s);
    for (size_t g = 0; g < model::kOpGroupCount; ++g) {
      if (i < sel.weights[g].size()) m.weight[g] = sel.weights[g][i];
    }
    out.paths[view.group.paths[i].name] = m;
  }
  out.heads[view.device] = scoring::ToModel(sel.scorer->Summary());
  return out;
}

// The selector's decisions of `view`: each path's choices, state and
// in-flight commands, the no-path waits.
model::DatapathReport DecisionsOf(const DatapathView& view) {
  model::DatapathReport r;
  r.device = view.device;
  r.policy = std::string(policy::PolicyName(view.policy));
  r.requests = view.stats.requests;
  r.failed_requests = view.stats.failed_requests;
  r.no_path_waits = view.stats.no_path_waits;
  r.no_path_timeouts = view.stats.no_path_timeouts;
  for (size_t i = 0; i < view.group.paths.size(); ++i) {
    model::DatapathPathReport p;
    p.path = view.group.paths[i].name;
    if (i < view.stats.paths.size()) {
      p.selections = view.stats.paths[i].selections;
    }
    const PathStatus st =
        i < view.status.size() ? view.status[i] : PathStatus{};
    p.state = st.failed ? model::DatapathPathState::kFailed
              : !model::AnaAllowsIo(st.ana)
                  ? model::DatapathPathState::kAnaUnusable
                  : model::DatapathPathState::kUsable;
    p.probing = st.failed && st.probing;
    if (i < view.selector.inflight.size() && view.selector.inflight[i] > 0) {
      p.inflight = static_cast<uint64_t>(view.selector.inflight[i]);
    }
    r.paths.push_back(std::move(p));
  }
  return r;
}

}  // namespace

nlohmann::json DatapathReportToJson(const model::DatapathReport& r) {
  nlohmann::json paths = nlohmann::json::array();
  for (const model::DatapathPathReport& p : r.paths) {
    paths.push_back(
        {{"name", p.path},
         {"selections", p.selections},
         {"state", std::string(exporters::DatapathPathStateLabel(p.state))},
         {"probing", p.probing},
         {"inflight", p.inflight}});
  }
  return {{"device", r.device},
          {"policy", r.policy},
          {"requests", r.requests},
          {"failed_requests", r.failed_requests},
          {"no_path_waits", r.no_path_waits},
          {"no_path_timeouts", r.no_path_timeouts},
          {"paths", std::move(paths)}};
}

absl::Status ReadControllers(const std::string& sysfs_root,
                             const NamespaceGroup& g,
                             std::vector<std::string>* subsystems,
                             std::vector<model::Controller>* controllers) {
  const std::filesystem::path sysfs(sysfs_root);
  subsystems->clear();
  controllers->clear();
  std::string error;
  for (const NamespacePath& p : g.paths) {
    const std::filesystem::path dir = sysfs / "class/nvme" / p.controller;
    bool ok = true;
    model::Controller c;
    c.name = p.controller;
    c.subsystem = SubsystemOf(sysfs, p.controller);
    c.transport = ReadAttr(dir / "transport", &ok);
    c.address = ReadAttr(dir / "address", &ok);
    collectors::SetControllerState(ReadAttr(dir / "state", &ok), c);
    c.cntlid = ReadAttr(dir / "cntlid", &ok);
    c.numa_node = p.numa_node;
    if ((!ok || c.subsystem.empty()) && error.empty()) {
      error = absl::StrCat("controller ", p.controller, " of ", p.name,
                           ": incomplete in ", dir.string());
    }
    subsystems->push_back(c.subsystem);
    controllers->push_back(std::move(c));
  }
  return error.empty() ? absl::OkStatus() : absl::UnavailableError(error);
}

model::Topology DatapathTopology(
    const DatapathView& view, const std::vector<std::string>& subsystems,
    const std::vector<model::Controller>& controllers) {
  model::Topology t;
  const std::string subsystem = subsystems.empty() ? "" : subsystems[0];
  t.subsystems.push_back({.name = subsystem, .nqn = view.group.subsysnqn});
  t.heads.push_back(
      {.name = view.device,
       .subsystem = subsystem,
       .nsid = view.group.paths.empty() ? 0 : view.group.paths[0].nsid});
  for (size_t i = 0; i < view.group.paths.size(); ++i) {
    const NamespacePath& np = view.group.paths[i];
    model::Path p;
    p.name = np.name;
    p.subsystem = i < subsystems.size() ? subsystems[i] : subsystem;
    p.head = view.device;
    p.controller = np.controller;
    p.numa_node = np.numa_node;
    if (i < view.status.size()) p.ana_state = view.status[i].ana;
    t.paths.push_back(std::move(p));
  }
  t.controllers = controllers;
  t.Sort();
  return t;
}

model::Snapshot DatapathSnapshot(const DatapathView& view,
                                 model::Topology topology) {
  model::Snapshot s;
  model::IoStats head;
  for (size_t i = 0; i < view.group.paths.size(); ++i) {
    if (i >= view.stats.paths.size()) break;
    const PathStats& ps = view.stats.paths[i];
    const std::string& name = view.group.paths[i].name;
    model::IoStats io;
    for (model::Op op : model::kAllOps) {
      const model::OpStats& o = ps.by_op[model::Index(op)];
      // An op the device never saw has no series, as with the sampler's
      // ops; reads and writes always have theirs.
      if (o.completed == 0 && op != model::Op::kRead &&
          op != model::Op::kWrite) {
        continue;
      }
      io.op(op) = o;
      if (!head.op(op)) head.op(op).emplace();
      head.op(op)->Merge(o);
    }
    s.path_io[name] = std::move(io);
    model::PathNvmeStats nvme;
    nvme.errors_by_class = ps.errors_by_class;
    nvme.failovers = ps.failovers;
    s.path_nvme[name] = nvme;
  }
  if (!view.group.paths.empty()) s.head_io[view.device] = std::move(head);
  s.scoring = SelectorScoring(view);
  s.datapath = DecisionsOf(view);
  s.topology = std::move(topology);
  s.collected_at = absl::Now();
  return s;
}

std::vector<MetricFamily> DatapathFamilies(const DatapathView& view,
                                           const model::Topology& topology) {
  std::vector<MetricFamily> out;
  const std::string subsystem =
      topology.subsystems.empty() ? "" : topology.subsystems[0].name;
  MetricFamily info = Family(
      "pathwise_datapath_info",
      "The userspace datapath's block device, the namespace it serves and "
      "its path selection policy.",
      MetricType::Gauge);
  Add(info,
      {{"device", view.device},
       {"subsystem", subsystem},
       {"namespace", view.group.id},
       {"policy", std::string(policy::PolicyName(view.policy))}},
      1);
  out.push_back(std::move(info));
  const Labels dev = {{"device", view.device}};
  const auto device_counter = [&](const char* name, const char* help,
                                  uint64_t v) {
    MetricFamily f = Family(name, help, MetricType::Counter);
    Add(f, dev, static_cast<double>(v));
    out.push_back(std::move(f));
  };
  device_counter("pathwise_datapath_requests_total",
                 "Block requests of the device completed.",
                 view.stats.requests);
  device_counter("pathwise_datapath_failed_requests_total",
                 "Block requests of the device completed with an error.",
                 view.stats.failed_requests);
  device_counter("pathwise_datapath_no_path_waits_total",
                 "Block requests that waited for a usable path.",
                 view.stats.no_path_waits);
  device_counter(
      "pathwise_datapath_no_path_timeouts_total",
      "Block requests failed with EIO after waiting --no-path-timeout for a "
      "usable path.",
      view.stats.no_path_timeouts);

  MetricFamily selections =
      Family("pathwise_datapath_path_selections_total",
             "Times the datapath's selector chose the path, by policy.",
             MetricType::Counter);
  MetricFamily timeouts = Family(
      "pathwise_datapath_path_timeouts_total",
      "Commands of the path out longer than --io-timeout (each took the path "
      "out of use).",
      MetricType::Counter);
  MetricFamily transport = Family(
      "pathwise_datapath_path_transport_errors_total",
      "Completions of the path without an NVMe status (the transport broke, "
      "the controller was resetting, the kernel cancelled the command).",
      MetricType::Counter);
  MetricFamily probes =
      Family("pathwise_datapath_path_probes_total",
             "Probe commands sent to the path while it was failed.",
             MetricType::Counter);
  MetricFamily probe_failures =
      Family("pathwise_datapath_path_probe_failures_total",
             "Probe commands of the path that failed.", MetricType::Counter);
  MetricFamily fenced =
      Family("pathwise_datapath_path_fenced_writes_total",
             "Writes cut off on the path by its failure and held for the write "
             "fence (keep-alive timeout + Command Quiesce Time) before another "
             "path took them, or before they failed out of attempts.",
             MetricType::Counter);
  MetricFamily inflight =
      Family("pathwise_datapath_path_inflight",
             "Commands out on the path over all the device's queues, as the "
             "selector counts them (queue-depth's input).",
             MetricType::Gauge);
  MetricFamily base_latency =
      Family("pathwise_datapath_path_base_latency_seconds",
             "The pathwise selector's base latency of the path: its lowest "
             "completion latency over the last 10 windows while below its cap.",
             MetricType::Gauge);
  MetricFamily cap = Family(
      "pathwise_datapath_path_cap",
      "The pathwise selector's cap of the path: the I/Os in flight it takes "
      "before it counts as saturated (rate x base latency x 5/4 + 1).",
      MetricType::Gauge);
  MetricFamily state = Family(
      "pathwise_datapath_path_state",
      "Whether the datapath sends I/O to the path, as a StateSet: usable, "
      "failed (failure handling took it out; probed until it answers) or "
      "ana_unusable (its ANA state allows no I/O).",
      MetricType::Gauge);
  for (size_t i = 0; i < view.group.paths.size(); ++i) {
    const model::Path* p = topology.FindPath(view.group.paths[i].name);
    if (p == nullptr) continue;
    const Labels base = PathLabels(*p);
    const PathStats ps =
        i < view.stats.paths.size() ? view.stats.paths[i] : PathStats{};
    Labels with_policy = base;
    with_policy.push_back(
        {"policy", std::string(policy::PolicyName(view.policy))});
    Add(selections, with_policy, static_cast<double>(ps.selections));
    Add(timeouts, base, static_cast<double>(ps.timeouts));
    Add(transport, base, static_cast<double>(ps.transport_errors));
    Add(probes, base, static_cast<double>(ps.probes));
    Add(probe_failures, base, static_cast<double>(ps.probe_failures));
    Add(fenced, base, static_cast<double>(ps.fenced_writes));
    const SelectorView& sel = view.selector;
    if (i < sel.inflight.size()) {
      Add(inflight, base, static_cast<double>(sel.inflight[i]));
    }
    if (i < sel.base_ns.size() && sel.base_ns[i] > 0) {
      Add(base_latency, base, static_cast<double>(sel.base_ns[i]) / 1e9);
    }
    if (i < sel.cap.size() && i < sel.base_ns.size() && sel.base_ns[i] > 0) {
      Add(cap, base, static_cast<double>(sel.cap[i]));
    }
    const PathStatus st =
        i < view.status.size() ? view.status[i] : PathStatus{};
    const char* current = st.failed                     ? "failed"
                          : !model::AnaAllowsIo(st.ana) ? "ana_unusable"
                                                        : "usable";
    for (const char* s : {"usable", "failed", "ana_unusable"}) {
      Labels l = base;
      l.push_back({"state", s});
      Add(state, std::move(l), std::string(s) == current ? 1 : 0);
    }
  }
  for (MetricFamily* f :
       {&selections, &inflight, &base_latency, &cap, &timeouts, &transport,
        &probes, &probe_failures, &fenced, &state}) {
    if (!f->metric.empty()) out.push_back(std::move(*f));
  }
  return out;
}

}  // namespace pathwise::datapath

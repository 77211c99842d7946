// SPDX-License-Identifier: Apache-2.0
#include "exporters/topology_json.h"

#include <initializer_list>
#include <optional>
#include <utility>

#include "absl/time/time.h"
#include "exporters/labels.h"
#include "exporters/queues_view.h"

namespace pathwise::exporters {
namespace {

using nlohmann::json;

json Dev(const std::optional<model::DevId>& dev) {
  return dev ? json(model::ToString(*dev)) : json(nullptr);
}

// The kernel's diag/ counters that are present, by name; an object only
// when the kernel has at least one of them (the key is left out otherwise).
void AddDiag(
    std::initializer_list<std::pair<const char*, std::optional<uint64_t>>>
        counters,
    json& obj) {
  json diag = json::object();
  for (const auto& [name, v] : counters) {
    if (v) diag[name] = *v;
  }
  if (!diag.empty()) obj["diag"] = std::move(diag);
}

json ControllerJson(const model::Controller& c) {
  json j{
      {"name", c.name},
      {"transport", c.transport},
      {"address", c.address},
      {"traddr", c.traddr},
      {"trsvcid", c.trsvcid},
      {"host_traddr", c.host_traddr},
      {"host_iface", c.host_iface},
      {"state", std::string(ControllerStateText(c))},
      {"cntlid", c.cntlid},
      {"numa_node", c.numa_node},
      {"io_queues", c.io_queues ? json(*c.io_queues) : json(nullptr)},
  };
  AddDiag({{"command_errors", c.diag.command_errors},
           {"resets", c.diag.resets},
           {"reconnects", c.diag.reconnects}},
          j);
  return j;
}

// Every histogram has the one layout of model::LatencyHistogram, given once
// per document (LatencyLayoutJson); each carries only its counts.
json HistogramJson(const model::LatencyHistogram& h, double sum_seconds) {
  return json{{"counts", h.buckets()},
              {"count", h.Count()},
              {"sum_seconds", sum_seconds}};
}

// JSON has no infinity: the +Inf bound is left out, so each "counts" has one
// more entry than "upper_bounds_seconds" (the last one: above every bound).
json LatencyLayoutJson() {
  json bounds = json::array();
  for (size_t i = 0; i < model::LatencyHistogram::kFiniteBuckets; ++i) {
    bounds.push_back(model::LatencyHistogram::UpperBoundSeconds(i));
  }
  return json{{"upper_bounds_seconds", bounds}};
}

json IoJson(const model::IoStats& io) {
  json ops = json::object();
  for (model::Op o_op : kOpExportOrder) {
    if (!io.op(o_op)) continue;
    const model::OpStats& op = *io.op(o_op);
    json& o = ops[std::string(OpLabel(o_op))];
    o = {
        {"completed", op.completed},
        {"bytes", op.bytes},
        {"time_seconds", static_cast<double>(op.time_ns) / 1e9},
    };
    if (op.errors) o["errors"] = *op.errors;
    if (op.latency) {
      o["latency_seconds"] =
          HistogramJson(*op.latency, static_cast<double>(op.time_ns) / 1e9);
    }
  }
  return json{{"ops", ops},
              {"inflight", io.inflight ? json(*io.inflight) : json(nullptr)}};
}

json IoMapJson(const std::map<std::string, model::IoStats, std::less<>>& m) {
  json out = json::object();
  for (const auto& [name, io] : m) out[name] = IoJson(io);
  return out;
}

json NvmeJson(
    const std::map<std::string, model::PathNvmeStats, std::less<>>& path_nvme) {
  json out = json::object();
  for (const auto& [path, st] : path_nvme) {
    // null while the nvme_complete_rq program is not attached.
    json classes = nullptr;
    if (st.errors_by_class) {
      classes = json::object();
      for (model::NvmeStatusClass cls : model::kNvmeErrorClasses) {
        classes[std::string(NvmeStatusClassLabel(cls))] =
            (*st.errors_by_class)[model::ErrorClassIndex(cls)];
      }
    }
    out[path] = {{"errors_by_class", classes},
                 {"retries", st.retries},
                 {"failovers", st.failovers}};
  }
  return out;
}

json SamplerJson(const std::optional<model::SamplerStats>& sampler) {
  if (!sampler) return nullptr;
  json dropped = json::object();
  for (model::DropReason reason : model::kAllDropReasons) {
    dropped[std::string(DropReasonLabel(reason))] =
        sampler->dropped[model::Index(reason)];
  }
  json programs = json::array();
  for (const model::SamplerStats::Program& p : sampler->programs) {
    programs.push_back(
        {{"name", p.name},
         {"run_time_seconds", static_cast<double>(p.run_time_ns) / 1e9},
         {"run_count", p.run_count}});
  }
  return json{{"dropped", dropped}, {"programs", programs}};
}

// Controller probes by controller ({} with probes off): the latency of the
// successful ones as a histogram, the failures by reason, and whether the
// controller is unreachable now.
json ProbesJson(const std::map<std::string, model::ControllerProbeStats,
                               std::less<>>& probes) {
  json out = json::object();
  for (const auto& [name, st] : probes) {
    json failures = json::object();
    for (model::ProbeFailure f : model::kAllProbeFailures) {
      failures[std::string(ProbeFailureLabel(f))] =
          st.failures[model::Index(f)];
    }
    out[name] = {{"latency_seconds",
                  HistogramJson(st.latency,
                                static_cast<double>(st.latency_sum_ns) / 1e9)},
                 {"failures", failures},
                 {"unreachable", st.unreachable}};
  }
  return out;
}

// The prober's ANA log page reads by controller (model::IoReading::
// controller_ana): the groups of the last successful read, when it was, and
// why the last read failed ("" when it did not).
json AnaLogsJson(
    const std::map<std::string, model::ControllerAnaLog, std::less<>>& logs) {
  json out = json::object();
  for (const auto& [name, log] : logs) {
    json groups = json::array();
    for (const model::ControllerAnaGroup& g : log.groups) {
      groups.push_back({{"id", g.id},
                        {"state", std::string(AnaStateLabel(g.state))},
                        {"nsids", g.nsids}});
    }
    out[name] = {
        {"change_count", log.change_count},
        {"groups", groups},
        {"read_at", log.read_at == absl::InfinitePast()
                        ? json(nullptr)
                        : json(absl::FormatTime(absl::RFC3339_full, log.read_at,
                                                absl::UTCTimeZone()))},
        {"error", log.error}};
  }
  return out;
}

json Optional(const std::optional<double>& v) {
  return v ? json(*v) : json(nullptr);
}

void AddScoring(const model::PathScoring& ps, json& path) {
  json weight = json::object(), ewma = json::object();
  for (model::OpGroup og : model::kAllOpGroups) {
    const size_t g = model::Index(og);
    const std::string group(OpGroupLabel(og));
    weight[group] = ps.weight[g];
    ewma[group] = Optional(ps.latency_ewma_seconds[g]);
  }
  path["health"] = std::string(PathHealthLabel(ps.health));
  path["weight"] = weight;
  path["score"] = Optional(ps.score);
  path["latency_ewma_seconds"] = ewma;
}

// The whole of model::Scoring, keyed by name (the topology tree carries
// only the per-path part).
json ScoringJson(const model::Topology& topo,
                 const std::optional<model::Scoring>& scoring) {
  if (!scoring) return nullptr;
  json paths = json::object(), heads = json::object(), advice = json::object();
  for (const auto& [name, ps] : scoring->paths) {
    json& p = paths[name];
    p = json::object();
    AddScoring(ps, p);
    p["sample_age_seconds"] = Optional(ps.sample_age_seconds);
  }
  for (const auto& [name, hs] : scoring->heads) {
    json by_state = json::object();
    for (model::PathHealth st : model::kAllPathHealth) {
      by_state[std::string(PathHealthLabel(st))] =
          hs.paths_by_state[model::Index(st)];
    }
    heads[name] = {
        {"paths_by_state", by_state},
        {"latency_imbalance_ratio", Optional(hs.latency_imbalance_ratio)}};
  }
  for (const model::Subsystem& s : topo.subsystems) {
    auto it = scoring->iopolicy_recommended.find(s.name);
    if (it == scoring->iopolicy_recommended.end()) continue;
    advice[s.name] = {
        {"iopolicy", std::string(RecommendedIopolicyText(it->second, s))},
        {"reason", it->second.reason}};
  }
  return json{
      {"paths", paths}, {"heads", heads}, {"iopolicy_recommended", advice}};
}

}  // namespace

namespace {

// The iopolicy actuator's last decision for a subsystem.
json DecisionJson(const model::IopolicyDecision& d) {
  return {{"from", std::string(IopolicyLabel(d.from))},
          {"to", std::string(IopolicyLabel(d.to))},
          {"result", std::string(DecisionResultLabel(d.result))},
          {"reason", d.reason},
          {"error", d.error},
          {"restore", d.restore},
          {"at", d.at == absl::InfinitePast()
                     ? json(nullptr)
                     : json(absl::FormatTime(absl::RFC3339_full, d.at,
                                             absl::UTCTimeZone()))}};
}

}  // namespace

json TopologyToJson(const model::Topology& t, const model::Scoring* scoring,
                    const model::ActuatorReport* actuator) {
  json subs = json::array();
  for (const model::Subsystem& s : t.subsystems) {
    json heads = json::array();
    for (const model::Head& h : t.heads) {
      if (h.subsystem != s.name) continue;
      json paths = json::array();
      for (const model::Path& p : t.paths) {
        if (p.head != h.name) continue;
        const model::Controller* c = t.FindController(p.controller);
        paths.push_back({
            {"name", p.name},
            {"dev", Dev(p.dev)},
            {"controller", p.controller},
            {"ana_state", std::string(AnaStateText(p))},
            {"numa_node", p.numa_node},
            {"transport", c ? c->transport : ""},
            {"address", c ? c->address : ""},
            {"controller_state",
             c ? std::string(ControllerStateText(*c)) : std::string()},
        });
        AddDiag({{"failovers", p.diag.failovers},
                 {"command_retries", p.diag.command_retries},
                 {"command_errors", p.diag.command_errors}},
                paths.back());
        if (scoring != nullptr) {
          if (auto it = scoring->paths.find(p.name);
              it != scoring->paths.end()) {
            AddScoring(it->second, paths.back());
          }
        }
      }
      heads.push_back({{"name", h.name},
                       {"nsid", h.nsid},
                       {"dev", Dev(h.dev)},
                       {"paths", paths}});
      AddDiag(
          {{"io_requeued_no_usable_path", h.diag.requeued_no_usable_path},
           {"io_failed_no_available_path", h.diag.failed_no_available_path}},
          heads.back());
    }
    json ctrls = json::array();
    for (const model::Controller& c : t.controllers) {
      if (c.subsystem == s.name) ctrls.push_back(ControllerJson(c));
    }
    subs.push_back({{"name", s.name},
                    {"nqn", s.nqn},
                    {"iopolicy", std::string(IopolicyText(s))},
                    {"model", s.model},
                    {"serial", s.serial},
                    {"heads", heads},
                    {"controllers", ctrls}});
    if (scoring != nullptr) {
      if (auto it = scoring->iopolicy_recommended.find(s.name);
          it != scoring->iopolicy_recommended.end()) {
        subs.back()["iopolicy_recommended"] =
            std::string(RecommendedIopolicyText(it->second, s));
        subs.back()["iopolicy_recommended_reason"] = it->second.reason;
      }
    }
    if (actuator != nullptr) {
      if (auto it = actuator->last_decision.find(s.name);
          it != actuator->last_decision.end()) {
        subs.back()["actuator_last_decision"] = DecisionJson(it->second);
      }
    }
  }
  return json{{"subsystems", subs}};
}

json SnapshotToJson(const model::Snapshot& snap) {
  json j =
      TopologyToJson(snap.topology, snap.scoring ? &*snap.scoring : nullptr,
                     snap.actuator ? &*snap.actuator : nullptr);
  j["generation"] = snap.generation;
  j["collected_at"] =
      snap.collected_at == absl::InfinitePast()
          ? json(nullptr)
          : json(absl::FormatTime(absl::RFC3339_full, snap.collected_at,
                                  absl::UTCTimeZone()));
  j["io_source"] = std::string(IoSourceLabel(snap.io_source));
  j["topology_changes_total"] = snap.topology_changes_total;
  const model::MultipathPresence presence = model::Presence(snap.topology);
  j["multipath"] = {{"subsystems", presence.subsystems},
                    {"multipath_subsystems", presence.multipath_subsystems},
                    {"subsystem_class", snap.topology.subsystem_class},
                    {"notice", presence.notice}};
  json collectors = json::array();
  for (const model::CollectorResult& r : snap.collectors) {
    collectors.push_back({{"name", r.name},
                          {"success", r.success},
                          {"duration_seconds", r.duration_seconds},
                          {"error", r.error}});
  }
  j["collectors"] = collectors;
  j["latency_histogram"] = LatencyLayoutJson();
  j["io"] = {{"paths", IoMapJson(snap.path_io)},
             {"heads", IoMapJson(snap.head_io)},
             {"devices", IoMapJson(snap.device_io)}};
  j["nvme"] = NvmeJson(snap.path_nvme);
  j["sampler"] = SamplerJson(snap.sampler);
  j["probes"] = ProbesJson(snap.controller_probe);
  // Only where the prober read one (sysfs had no ANA state), so that the
  // snapshot is unchanged elsewhere.
  if (!snap.controller_ana.empty()) {
    j["ana_logs"] = AnaLogsJson(snap.controller_ana);
  }
  j["scoring"] = ScoringJson(snap.topology, snap.scoring);
  // The NVMe/TCP queue map, with --queues only (no key otherwise).
  if (snap.queues) j["queues"] = QueueMapToJson(*snap.queues);
  return j;
}

std::string JsonText(const json& j, int indent) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false,
                json::error_handler_t::replace) +
         "\n";
}

}  // namespace pathwise::exporters

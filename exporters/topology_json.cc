#include "exporters/topology_json.h"

#include "absl/time/time.h"
#include "exporters/labels.h"

namespace pathwise::exporters {
namespace {

using nlohmann::json;

json Dev(const std::optional<model::DevId>& dev) {
  return dev ? json(model::ToString(*dev)) : json(nullptr);
}

json ControllerJson(const model::Controller& c) {
  return json{
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
}

json IoJson(const model::IoStats& io) {
  json ops = json::object();
  for (model::Op op : kOpExportOrder) {
    const std::optional<model::OpStats>& s = io.op(op);
    if (!s) continue;
    ops[std::string(OpLabel(op))] = {
        {"completed", s->completed},
        {"bytes", s->bytes},
        {"time_seconds", static_cast<double>(s->time_ns) / 1e9},
    };
  }
  return json{{"ops", ops},
              {"inflight", io.inflight ? json(*io.inflight) : json(nullptr)}};
}

void AddScoring(const model::PathScoring& ps, json& path) {
  json weight = json::object(), ewma = json::object();
  for (model::OpGroup og : model::kAllOpGroups) {
    const size_t g = model::Index(og);
    const std::string group(OpGroupLabel(og));
    weight[group] = ps.weight[g];
    ewma[group] = ps.latency_ewma_seconds[g] ? json(*ps.latency_ewma_seconds[g])
                                             : json(nullptr);
  }
  path["health"] = std::string(PathHealthLabel(ps.health));
  path["weight"] = weight;
  path["score"] = ps.score ? json(*ps.score) : json(nullptr);
  path["latency_ewma_seconds"] = ewma;
}

}  // namespace

json TopologyToJson(const model::Topology& t, const model::Scoring* scoring) {
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
            std::string(IopolicyLabel(it->second.iopolicy));
        subs.back()["iopolicy_recommended_reason"] = it->second.reason;
      }
    }
  }
  return json{{"subsystems", subs}};
}

json SnapshotToJson(const model::Snapshot& snap) {
  json j =
      TopologyToJson(snap.topology, snap.scoring ? &*snap.scoring : nullptr);
  j["generation"] = snap.generation;
  j["collected_at"] =
      snap.collected_at == absl::InfinitePast()
          ? json(nullptr)
          : json(absl::FormatTime(absl::RFC3339_full, snap.collected_at,
                                  absl::UTCTimeZone()));
  j["io_source"] = snap.io_source;
  j["topology_changes_total"] = snap.topology_changes_total;
  json collectors = json::array();
  for (const model::CollectorResult& r : snap.collectors) {
    collectors.push_back({{"name", r.name},
                          {"success", r.success},
                          {"duration_seconds", r.duration_seconds},
                          {"error", r.error}});
  }
  j["collectors"] = collectors;
  json paths = json::object(), heads = json::object();
  for (const auto& [name, io] : snap.path_io) paths[name] = IoJson(io);
  for (const auto& [name, io] : snap.head_io) heads[name] = IoJson(io);
  j["io"] = {{"paths", paths}, {"heads", heads}};
  return j;
}

}  // namespace pathwise::exporters

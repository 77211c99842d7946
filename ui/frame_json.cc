// SPDX-License-Identifier: Apache-2.0
#include "ui/frame_json.h"

#include "absl/time/time.h"
#include "exporters/labels.h"

namespace pathwise::ui {
namespace {

using nlohmann::json;

json Opt(const std::optional<double>& v) {
  return v ? json(*v) : json(nullptr);
}

json Window(const OpWindow& w) {
  return {{"iops", w.iops},
          {"mib_per_second", w.mib_per_second},
          {"p50_seconds", Opt(w.p50)},
          {"p99_seconds", Opt(w.p99)},
          {"mean_seconds", Opt(w.mean)}};
}

json CountJson(const std::optional<Count>& c) {
  if (!c) return nullptr;
  return {{"total", c->total}, {"interval", c->interval}};
}

json PathJson(const PathRow& p) {
  json j = {
      {"subsystem", p.subsystem},
      {"head", p.head},
      {"name", p.path},
      {"controller", p.controller},
      {"transport", p.transport},
      {"address", p.address},
      {"ana_state", p.ana_state},
      {"controller_state", p.controller_state},
      {"health", p.health
                     ? json(std::string(exporters::PathHealthLabel(*p.health)))
                     : json(nullptr)},
      {"read", Window(p.read)},
      {"write", Window(p.write)},
      {"inflight", p.inflight ? json(*p.inflight) : json(nullptr)},
      {"latency_ewma_seconds",
       {{"read", Opt(p.ewma_read)}, {"write", Opt(p.ewma_write)}}},
      {"weight",
       {{"read", p.weight_read ? json(*p.weight_read) : json(nullptr)},
        {"write", p.weight_write ? json(*p.weight_write) : json(nullptr)}}},
      {"failovers", CountJson(p.failovers)},
      {"errors", CountJson(p.errors)}};
  // The datapath's snapshot only: an agent's paths keep their fields.
  if (p.datapath_state) {
    j["datapath"] = {{"state", *p.datapath_state},
                     {"selections", CountJson(p.selections)},
                     {"selection_share", Opt(p.selection_share)}};
  }
  return j;
}

json DatapathJson(const DatapathLine& d) {
  return {{"device", d.device},
          {"policy", d.policy},
          {"paths", d.paths},
          {"usable_paths", d.usable},
          {"requests", CountJson(d.requests)},
          {"failed_requests", CountJson(d.failed_requests)},
          {"no_path_waits", CountJson(d.no_path_waits)},
          {"no_path_timeouts", CountJson(d.no_path_timeouts)}};
}

json HeadJson(const HeadRow& h) {
  json by = json::object();
  for (model::PathHealth st : model::kAllPathHealth) {
    by[std::string(exporters::PathHealthLabel(st))] =
        h.paths_by_health[model::Index(st)];
  }
  return {{"subsystem", h.subsystem},
          {"name", h.head},
          {"paths", h.paths},
          {"read", Window(h.read)},
          {"write", Window(h.write)},
          {"paths_by_health", by},
          {"latency_imbalance_ratio", Opt(h.imbalance)}};
}

json ControllerJson(const ControllerRow& c) {
  return {{"subsystem", c.subsystem},
          {"name", c.controller},
          {"transport", c.transport},
          {"address", c.address},
          {"state", c.state},
          {"paths", c.paths},
          {"read_iops", c.read_iops},
          {"write_iops", c.write_iops},
          {"probe_p50_seconds", Opt(c.probe_p50)},
          {"probe_p99_seconds", Opt(c.probe_p99)},
          {"probe_failures", CountJson(c.probe_failures)},
          {"unreachable", c.unreachable},
          {"resets", CountJson(c.resets)},
          {"reconnects", CountJson(c.reconnects)},
          {"errors", CountJson(c.errors)}};
}

}  // namespace

json FrameToJson(const Frame& f, const std::string& source) {
  json subs = json::array(), heads = json::array(), paths = json::array(),
       ctrls = json::array(), devices = json::array();
  for (const SubsystemLine& s : f.subsystems) {
    subs.push_back({{"name", s.subsystem},
                    {"nqn", s.nqn},
                    {"iopolicy", s.iopolicy},
                    {"iopolicy_recommended", s.recommended},
                    {"reason", s.reason},
                    {"actuator_last_decision", s.decision}});
  }
  for (const HeadRow& h : f.heads) heads.push_back(HeadJson(h));
  for (const PathRow& p : f.paths) paths.push_back(PathJson(p));
  for (const ControllerRow& c : f.controllers)
    ctrls.push_back(ControllerJson(c));
  for (const DeviceRow& d : f.devices) {
    devices.push_back({{"name", d.device},
                       {"read", Window(d.read)},
                       {"write", Window(d.write)}});
  }
  json out = {{"source", source},
              {"generation", f.generation},
              {"collected_at",
               f.collected_at == absl::InfinitePast()
                   ? json(nullptr)
                   : json(absl::FormatTime(absl::RFC3339_full, f.collected_at,
                                           absl::UTCTimeZone()))},
              {"interval_seconds", f.interval_seconds},
              {"io_source", std::string(exporters::IoSourceLabel(f.io_source))},
              {"failed_collectors", f.failed_collectors},
              {"notice", f.notice},
              {"subsystems", subs},
              {"heads", heads},
              {"paths", paths},
              {"controllers", ctrls},
              {"devices", devices}};
  if (f.datapath) out["datapath"] = DatapathJson(*f.datapath);
  return out;
}

}  // namespace pathwise::ui

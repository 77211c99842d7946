// SPDX-License-Identifier: Apache-2.0
// Topology families: subsystems, heads, paths and controllers with their
// attributes and states.
#include <string>
#include <vector>

#include "exporters/labels.h"
#include "exporters/prometheus_internal.h"

namespace pathwise::exporters::internal {
namespace {

using prometheus::MetricFamily;
using prometheus::MetricType;

void AddSubsystemAndHeadFamilies(const model::Topology& topo,
                                 std::vector<MetricFamily>& out) {
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
             With(HeadLabels(h),
                  {{"nsid", h.nsid ? std::to_string(h.nsid) : std::string()}}),
             1);
  }
  Push(out, std::move(head_info));
}

void AddPathFamilies(const model::Topology& topo, MetricsProfile profile,
                     std::vector<MetricFamily>& out) {
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
  for (const model::Path& p : topo.paths) {
    const model::Controller* c = topo.FindController(p.controller);
    const std::string transport = c ? c->transport : "";
    const std::string address = c ? c->address : "";
    const Labels base = PathLabels(p);
    AddGauge(path_info,
             With(base, {{"transport", transport}, {"address", address}}), 1);
    if (!AnaStateText(p).empty()) {
      for (model::AnaState st : model::kAllAnaStates) {
        if (profile == MetricsProfile::kDefault && p.ana_state != st) continue;
        AddGauge(ana, With(base, {{"state", std::string(AnaStateLabel(st))}}),
                 p.ana_state == st ? 1 : 0);
      }
    }
  }
  Push(out, std::move(path_info));
  Push(out, std::move(ana));
}

void AddControllerFamilies(const model::Topology& topo,
                           std::vector<MetricFamily>& out) {
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
}

}  // namespace

void AddTopologyFamilies(const model::Topology& topo, MetricsProfile profile,
                         std::vector<MetricFamily>& out) {
  AddSubsystemAndHeadFamilies(topo, out);
  AddPathFamilies(topo, profile, out);
  AddControllerFamilies(topo, out);
}

}  // namespace pathwise::exporters::internal

// SPDX-License-Identifier: Apache-2.0
// The actuators' families (control/): the iopolicy actuator's configured
// mode and its decisions; the head iostats switch's heads and changes.
#include <string>
#include <vector>

#include "exporters/labels.h"
#include "exporters/prometheus_internal.h"

namespace pathwise::exporters::internal {

void AddActuatorFamilies(const model::ActuatorReport& report,
                         std::vector<prometheus::MetricFamily>& out) {
  prometheus::MetricFamily mode = Family(
      "pathwise_actuator_mode",
      "The iopolicy actuator's mode (--actuate) as a StateSet (off, dry-run, "
      "on): 1 for the configured mode, 0 for the others.",
      prometheus::MetricType::Gauge);
  for (model::ActuateMode m : model::kAllActuateModes) {
    AddGauge(mode, {{"mode", std::string(ActuateModeLabel(m))}},
             report.mode == m ? 1 : 0);
  }
  prometheus::MetricFamily decisions = Family(
      "pathwise_actuator_decisions_total",
      "Iopolicy decisions of the actuator by subsystem, from and to policy "
      "and result: applied (written and read back), dry_run (--actuate="
      "dry-run: decided, not written), refused (the kernel rejected the "
      "policy), failed (not written, or read back different); restores on "
      "exit included.",
      prometheus::MetricType::Counter);
  for (const auto& [key, n] : report.decisions_total) {
    AddCounter(decisions,
               {{"subsystem", key.subsystem},
                {"from", std::string(IopolicyLabel(key.from))},
                {"to", std::string(IopolicyLabel(key.to))},
                {"result", std::string(DecisionResultLabel(key.result))}},
               static_cast<double>(n));
  }
  Push(out, std::move(mode));
  Push(out, std::move(decisions));
}

void AddHeadIostatsFamilies(const model::HeadIostatsReport& report,
                            std::vector<prometheus::MetricFamily>& out) {
  prometheus::MetricFamily heads = Family(
      "pathwise_head_iostats_disabled_heads",
      "Multipath heads whose kernel I/O accounting (queue/iostats) pathwise "
      "holds off while its eBPF sampler counts their I/O "
      "(--head-iostats=off; with dry-run, the heads it would hold off).",
      prometheus::MetricType::Gauge);
  AddGauge(heads, {}, static_cast<double>(report.heads_off));
  prometheus::MetricFamily changes = Family(
      "pathwise_head_iostats_changes_total",
      "Changes of a multipath head's queue/iostats by pathwise, by action "
      "(off; restore: back on, when the sampler stops or falls back to "
      "sysfs, or on exit) and result (applied: written and read back, "
      "dry_run, failed).",
      prometheus::MetricType::Counter);
  for (bool restore : {false, true}) {
    for (model::DecisionResult r :
         {model::DecisionResult::kApplied, model::DecisionResult::kDryRun,
          model::DecisionResult::kFailed}) {
      auto it = report.changes_total.find({.restore = restore, .result = r});
      AddCounter(changes,
                 {{"action", restore ? "restore" : "off"},
                  {"result", std::string(DecisionResultLabel(r))}},
                 it == report.changes_total.end()
                     ? 0.0
                     : static_cast<double>(it->second));
    }
  }
  Push(out, std::move(heads));
  Push(out, std::move(changes));
}

}  // namespace pathwise::exporters::internal

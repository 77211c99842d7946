// The actuators' families (control/): the iopolicy actuator's configured
// mode and its decisions.
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

}  // namespace pathwise::exporters::internal

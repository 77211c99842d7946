// SPDX-License-Identifier: Apache-2.0
// The iopolicy actuator: after each published snapshot, the advisor's
// recommendation goes through the decider's safeguards
// (control/iopolicy_decider.h) and, with --actuate=on, into the kernel
// (control/iopolicy_file.h: written, then read back). Every decision is one
// structured log line and counted in the report the exporters show
// (pathwise_actuator_decisions_total, pathwise_actuator_mode, the last
// decision in /api/v1/topology). Stop() undoes pathwise's changes on exit.
//
// Not thread-safe: the collection loop drives it (Act, Report) and the
// shutdown path calls Stop() once that loop has ended.
#ifndef PATHWISE_CONTROL_IOPOLICY_ACTUATOR_H_
#define PATHWISE_CONTROL_IOPOLICY_ACTUATOR_H_

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "control/iopolicy_decider.h"
#include "control/iopolicy_file.h"
#include "model/actuation.h"
#include "model/topology.h"

namespace pathwise::control {

class IopolicyActuator {
 public:
  // Fails on a bad config.subsystems.
  static absl::StatusOr<std::unique_ptr<IopolicyActuator>> Create(
      IopolicyActuatorConfig config, std::unique_ptr<IopolicyFile> file);

  absl::string_view name() const { return "iopolicy"; }

  // Decides (and with --actuate=on writes) for every subsystem of the
  // published snapshot, at its collected_at. Decisions that fail are
  // decisions (logged, counted), not an error of the stage.
  absl::Status Act(const model::Snapshot& published);

  // On exit: with --actuate=on and restore on, writes back the policy found
  // before pathwise's first change to each subsystem it changed, unless
  // the subsystem no longer has the policy pathwise wrote (someone else
  // changed it since: that is left alone, with a warning). Each restore is a
  // decision. Act does nothing afterwards.
  void Stop(absl::Time now);

  model::ActuatorReport Report() const { return report_; }

 private:
  IopolicyActuator(IopolicyDecider decider, std::unique_ptr<IopolicyFile> file)
      : decider_(std::move(decider)), file_(std::move(file)) {
    report_.mode = decider_.config().mode;
  }

  // Carries out one plan (write and read back, or dry run); returns the
  // result and sets `*error`.
  model::DecisionResult Carry(const IopolicyPlan& plan, std::string* error);
  // Logs and counts one decision.
  void Note(const IopolicyPlan& plan, model::DecisionResult result,
            const std::string& error, absl::Time now);

  IopolicyDecider decider_;
  std::unique_ptr<IopolicyFile> file_;
  model::ActuatorReport report_;
  bool stopped_ = false;
};

}  // namespace pathwise::control

#endif  // PATHWISE_CONTROL_IOPOLICY_ACTUATOR_H_

// SPDX-License-Identifier: Apache-2.0
#include "control/iopolicy_actuator.h"

#include <optional>
#include <string>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "collectors/kernel_strings.h"
#include "exporters/labels.h"
#include "spdlog/spdlog.h"

namespace pathwise::control {
namespace {

// The kernel's spelling, which is also the label value.
std::string Kernel(model::Iopolicy p) {
  return std::string(exporters::IopolicyLabel(p));
}

absl::string_view ResultLabel(model::DecisionResult r) {
  return exporters::DecisionResultLabel(r);
}

// A free-text value of the log line, quoted, with quotes, backslashes and
// control characters escaped (C style) so the line stays one line and
// splits unambiguously.
std::string Quoted(absl::string_view text) {
  return absl::StrCat("\"", absl::CEscape(text), "\"");
}

}  // namespace

absl::StatusOr<std::unique_ptr<IopolicyActuator>> IopolicyActuator::Create(
    IopolicyActuatorConfig config, std::unique_ptr<IopolicyFile> file) {
  absl::StatusOr<IopolicyDecider> decider =
      IopolicyDecider::Create(std::move(config));
  if (!decider.ok()) return decider.status();
  return std::unique_ptr<IopolicyActuator>(
      new IopolicyActuator(*std::move(decider), std::move(file)));
}

model::DecisionResult IopolicyActuator::Carry(const IopolicyPlan& plan,
                                              std::string* error) {
  if (decider_.config().mode != model::ActuateMode::kOn) {
    return model::DecisionResult::kDryRun;
  }
  const absl::Status written = file_->Write(plan.subsystem, Kernel(plan.to));
  if (absl::IsInvalidArgument(written)) {
    *error = std::string(written.message());
    return model::DecisionResult::kRefused;
  }
  if (!written.ok()) {
    *error = std::string(written.message());
    return model::DecisionResult::kFailed;
  }
  absl::StatusOr<std::string> back = file_->Read(plan.subsystem);
  if (!back.ok()) {
    *error = absl::StrCat("written, but cannot read it back: ",
                          back.status().message());
    return model::DecisionResult::kFailed;
  }
  if (collectors::ParseIopolicy(*back) != plan.to) {
    *error = absl::StrCat("written, but the kernel reports \"", *back, "\"");
    return model::DecisionResult::kFailed;
  }
  return model::DecisionResult::kApplied;
}

void IopolicyActuator::Note(const IopolicyPlan& plan,
                            model::DecisionResult result,
                            const std::string& error, absl::Time now) {
  ++report_.decisions_total[{plan.subsystem, plan.from, plan.to, result}];
  report_.last_decision[plan.subsystem] = {
      plan.from, plan.to, result, plan.reason, error, plan.restore, now};
  // One line, key=value, the free text quoted: what a log pipeline can
  // split without a grammar of its own.
  const std::string line = absl::StrCat(
      "iopolicy decision: subsystem=", plan.subsystem,
      " from=", Kernel(plan.from), " to=", Kernel(plan.to),
      " result=", ResultLabel(result), " reason=", Quoted(plan.reason),
      error.empty() ? "" : absl::StrCat(" error=", Quoted(error)));
  if (result == model::DecisionResult::kApplied ||
      result == model::DecisionResult::kDryRun) {
    spdlog::info("{}", line);
  } else {
    spdlog::warn("{}", line);
  }
}

absl::Status IopolicyActuator::Act(const model::Snapshot& published) {
  if (stopped_ || decider_.config().mode == model::ActuateMode::kOff) {
    return absl::OkStatus();
  }
  const model::Scoring* scoring =
      published.scoring ? &*published.scoring : nullptr;
  const absl::Time now = published.collected_at;
  for (const model::Subsystem& s : published.topology.subsystems) {
    // A refusal makes the decider plan the replacement policy at once; each
    // policy is refused at most once, so this ends.
    for (std::optional<IopolicyPlan> plan = decider_.Plan(s, scoring, now);
         plan.has_value(); plan = decider_.Plan(s, scoring, now)) {
      if (scoring != nullptr) {
        const std::string figures =
            Figures(published.topology, *scoring, s.name);
        if (!figures.empty()) absl::StrAppend(&plan->reason, "; ", figures);
      }
      std::string error;
      const model::DecisionResult result = Carry(*plan, &error);
      decider_.Record(*plan, result, now);
      Note(*plan, result, error, now);
      if (result != model::DecisionResult::kRefused) break;
    }
  }
  return absl::OkStatus();
}

void IopolicyActuator::Stop(absl::Time now) {
  if (stopped_) return;
  stopped_ = true;
  if (decider_.config().mode != model::ActuateMode::kOn) return;
  for (const IopolicyPlan& plan : decider_.RestorePlans()) {
    if (!decider_.config().restore) {
      spdlog::info(
          "iopolicy of {} left at {} (found {}): --actuate-restore=false",
          plan.subsystem, Kernel(plan.from), Kernel(plan.to));
      continue;
    }
    absl::StatusOr<std::string> now_is = file_->Read(plan.subsystem);
    if (now_is.ok() && collectors::ParseIopolicy(*now_is) != plan.from) {
      spdlog::warn(
          "iopolicy of {} not restored to {}: it is \"{}\", not {} as "
          "pathwise left it (changed by someone else since)",
          plan.subsystem, Kernel(plan.to), *now_is, Kernel(plan.from));
      continue;
    }
    std::string error;
    const model::DecisionResult result = Carry(plan, &error);
    decider_.Record(plan, result, now);
    Note(plan, result, error, now);
  }
}

}  // namespace pathwise::control

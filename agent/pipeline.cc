// SPDX-License-Identifier: Apache-2.0
#include "agent/pipeline.h"

#include <chrono>
#include <exception>
#include <optional>
#include <utility>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace pathwise::agent {
namespace {

// Runs one stage's body: times it, turns an exception into a failure and
// logs an error when it differs from the stage's previous one (and the
// recovery). `kind` names the stage kind in the log ("collector" for the
// collection stages, as their metric does).
model::CollectorResult RunStage(const char* kind, absl::string_view name,
                                std::string& last_error,
                                absl::FunctionRef<absl::Status()> body) {
  model::CollectorResult result;
  result.name = std::string(name);
  absl::Status status;
  const auto start = std::chrono::steady_clock::now();
  try {
    status = body();
  } catch (const std::exception& ex) {
    status = absl::InternalError(absl::StrCat("exception: ", ex.what()));
  } catch (...) {
    status = absl::InternalError("unknown exception");
  }
  result.duration_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  result.success = status.ok();
  if (!status.ok()) {
    result.error = std::string(status.message());
    if (result.error != last_error) {
      spdlog::warn("{} {} failed: {}", kind, result.name, result.error);
    }
  } else if (!last_error.empty()) {
    spdlog::info("{} {} recovered", kind, result.name);
  }
  last_error = result.error;
  return result;
}

}  // namespace

void Pipeline::SetTopologySource(
    std::unique_ptr<collectors::TopologySource> source) {
  topology_ = {std::move(source), ""};
}

void Pipeline::AddIoSource(std::unique_ptr<collectors::IoSource> source) {
  io_.push_back({std::move(source), ""});
}

void Pipeline::SetScoring(std::unique_ptr<scoring::ScoringStage> stage) {
  scoring_ = {std::move(stage), ""};
}

void Pipeline::AddActuator(std::unique_ptr<Actuator> actuator) {
  actuators_.push_back({std::move(actuator), ""});
}

model::Snapshot Pipeline::Collect() {
  model::Snapshot snap;
  if (topology_.impl != nullptr) {
    snap.collectors.push_back(
        RunStage("collector", topology_.impl->name(), topology_.last_error,
                 [&] { return topology_.impl->Read(snap.topology); }));
  }
  model::IoReading io;
  for (Stage<collectors::IoSource>& s : io_) {
    snap.collectors.push_back(
        RunStage("collector", s.impl->name(), s.last_error,
                 [&] { return s.impl->Read(snap.topology, io); }));
  }
  if (scoring_.impl != nullptr) {
    std::optional<model::Scoring> scoring;
    snap.collectors.push_back(
        RunStage("collector", scoring_.impl->name(), scoring_.last_error, [&] {
          scoring = scoring_.impl->Score(snap.topology, io.path_io,
                                         io.path_nvme, io.controller_probe);
          return absl::OkStatus();
        }));
    snap.scoring = std::move(scoring);
  }
  static_cast<model::IoReading&>(snap) = std::move(io);
  for (const Stage<Actuator>& a : actuators_) a.impl->Report(snap);
  return snap;
}

void Pipeline::Act(const model::Snapshot& published) {
  for (Stage<Actuator>& a : actuators_) {
    RunStage("actuator", a.impl->name(), a.last_error,
             [&] { return a.impl->Act(published); });
  }
}

bool Pipeline::Stop(model::Snapshot& last) {
  for (Stage<Actuator>& a : actuators_) {
    RunStage("actuator", a.impl->name(), a.last_error, [&] {
      a.impl->Stop();
      return absl::OkStatus();
    });
  }
  for (const Stage<Actuator>& a : actuators_) a.impl->Report(last);
  return !actuators_.empty();
}

}  // namespace pathwise::agent

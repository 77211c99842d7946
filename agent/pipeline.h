// SPDX-License-Identifier: Apache-2.0
// One collection as an explicit sequence of typed stages:
//
//   topology source  -> model::Topology
//   I/O sources      (topology)             -> model::IoReading
//   derive: scoring  (topology, I/O)        -> model::Scoring
//   [the agent numbers and publishes the snapshot]
//   actuators        (published snapshot)   -> act on the system (opt-in)
//
// Each collection stage is reported in the snapshot as a
// model::CollectorResult under its name (pathwise_collector_success and
// pathwise_collector_duration_seconds). A stage that fails or throws is
// recorded as failed and the later stages still run with what the earlier
// ones produced; a stage's error is logged as one line when it differs from
// that stage's previous error, so a persistent fault does not flood the log.
//
// Where later parts plug in: actuators (an iopolicy actuator writing the
// advisor's recommendation, a controller prober) are AddActuator()s and run
// only on published snapshots; a datapath's own statistics are one more
// AddIoSource(), so scoring and the exporters see them like any other I/O.
#ifndef PATHWISE_AGENT_PIPELINE_H_
#define PATHWISE_AGENT_PIPELINE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "collectors/collector.h"
#include "model/topology.h"
#include "scoring/stage.h"

namespace pathwise::agent {

// Acts on a published snapshot. Failures are logged like a stage's (once
// per change) and do not affect collection; they are not collector results.
class Actuator {
 public:
  virtual ~Actuator() = default;
  virtual absl::string_view name() const = 0;
  virtual absl::Status Act(const model::Snapshot& published) = 0;
  // Adds what the actuator did so far to a snapshot being collected (or
  // republished on exit), for the exporters.
  virtual void Report(model::Snapshot& /*next*/) const {}
  // On exit, after the last Act: undo what needs undoing.
  virtual void Stop() {}
};

// Owns the stages and runs them. Set the stages up before the first
// Collect(); not thread-safe: one collection loop drives it.
class Pipeline {
 public:
  void SetTopologySource(std::unique_ptr<collectors::TopologySource> source);
  // I/O sources run in the order added, each adding to the same
  // model::IoReading.
  void AddIoSource(std::unique_ptr<collectors::IoSource> source);
  void SetScoring(std::unique_ptr<scoring::ScoringStage> stage);
  void AddActuator(std::unique_ptr<Actuator> actuator);

  // Runs the topology source, the I/O sources and scoring (each one that is
  // set) into a new snapshot with one CollectorResult per stage in that
  // order, and lets the actuators report what they did so far. The snapshot is
  // not numbered (generation, collected_at) nor published: that is the agent's
  // part.
  model::Snapshot Collect();

  // Runs the actuators, in the order added, on a published snapshot.
  void Act(const model::Snapshot& published);

  // On exit: stops the actuators in the order added (each undoes its
  // changes), then lets them report into `last`, a copy of the last
  // snapshot to republish. False when there is no actuator.
  bool Stop(model::Snapshot& last);

 private:
  template <typename T>
  struct Stage {
    std::unique_ptr<T> impl;
    std::string last_error;  // to log an error only when it changes
  };

  Stage<collectors::TopologySource> topology_;
  std::vector<Stage<collectors::IoSource>> io_;
  Stage<scoring::ScoringStage> scoring_;
  std::vector<Stage<Actuator>> actuators_;
};

}  // namespace pathwise::agent

#endif  // PATHWISE_AGENT_PIPELINE_H_

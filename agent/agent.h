// SPDX-License-Identifier: Apache-2.0
// Agent: drives the collection pipeline, turns each collection into an
// immutable model::Snapshot (numbered, counting topology changes between
// scans), publishes it to the SnapshotStore that exporters read, then lets
// the pipeline's actuators act on it. It exposes its health as typed state;
// serving it is the exporters' part.
#ifndef PATHWISE_AGENT_AGENT_H_
#define PATHWISE_AGENT_AGENT_H_

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "agent/pipeline.h"
#include "model/health.h"
#include "model/snapshot_store.h"

namespace pathwise::agent {

class Agent {
 public:
  Agent(Pipeline& pipeline, model::SnapshotStore& store,
        absl::Duration interval)
      : pipeline_(pipeline), store_(store), interval_(interval) {}

  // Runs the pipeline once, publishes the snapshot, runs the actuators on
  // it and returns it. Logs the host's lack of multipath (model::Presence)
  // at the first collection and whenever what it finds changes.
  std::shared_ptr<const model::Snapshot> CollectOnce();

  // On exit, once the collection loop has ended: stops the actuators (they
  // undo their changes) and republishes the last snapshot with their final
  // report, so a scrape until the server stops sees the restores counted.
  void Shutdown();

  // Ready once a collection has succeeded (every stage reported success);
  // live while collections keep coming (the last is no older than
  // 3 × interval + 5 s). Thread-safe. A host with nothing to watch is
  // healthy; its notice says so.
  model::Health Health() const;

 private:
  void LogPresence(const model::Topology& topology);

  Pipeline& pipeline_;
  model::SnapshotStore& store_;
  const absl::Duration interval_;
  std::shared_ptr<const model::Snapshot> previous_;
  uint64_t generation_ = 0;
  uint64_t topology_changes_ = 0;
  std::atomic<bool> ever_succeeded_{false};
  // The model::Presence notice last logged; nullopt before the first
  // collection. Logged at start and when it changes, not per interval.
  std::optional<std::string> notice_;
};

}  // namespace pathwise::agent

#endif  // PATHWISE_AGENT_AGENT_H_

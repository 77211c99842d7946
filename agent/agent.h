// Agent: drives the collector registry, turns each collection into an
// immutable model::Snapshot (counting topology changes between scans) and
// publishes it to the SnapshotStore that exporters read.
#ifndef PATHWISE_AGENT_AGENT_H_
#define PATHWISE_AGENT_AGENT_H_

#include <atomic>
#include <memory>

#include "absl/time/time.h"
#include "collectors/collector.h"
#include "exporters/http_server.h"
#include "model/snapshot_store.h"

namespace pathwise::agent {

class Agent {
 public:
  Agent(collectors::CollectorRegistry& registry, model::SnapshotStore& store,
        absl::Duration interval)
      : registry_(registry), store_(store), interval_(interval) {}

  // Runs every collector once, publishes and returns the snapshot.
  std::shared_ptr<const model::Snapshot> CollectOnce();

  // 200 once a collection has succeeded (every collector reported success)
  // and while collections keep coming (the last is no older than
  // 3 × interval + 5 s); 503 otherwise. The body says why.
  exporters::HttpResponse Healthz() const;

 private:
  collectors::CollectorRegistry& registry_;
  model::SnapshotStore& store_;
  const absl::Duration interval_;
  std::shared_ptr<const model::Snapshot> previous_;
  uint64_t generation_ = 0;
  uint64_t topology_changes_ = 0;
  std::atomic<bool> ever_succeeded_{false};
};

}  // namespace pathwise::agent

#endif  // PATHWISE_AGENT_AGENT_H_

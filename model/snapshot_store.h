// SPDX-License-Identifier: Apache-2.0
// SnapshotStore publishes the current model::Snapshot. Collectors build a new
// Snapshot off to the side and Publish() it; exporters Load() a shared_ptr and
// render from it without holding any lock while they render, so a slow scrape
// never blocks a collection (and vice versa).
#ifndef PATHWISE_MODEL_SNAPSHOT_STORE_H_
#define PATHWISE_MODEL_SNAPSHOT_STORE_H_

#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "model/topology.h"

namespace pathwise::model {

class SnapshotStore {
 public:
  SnapshotStore() = default;
  SnapshotStore(const SnapshotStore&) = delete;
  SnapshotStore& operator=(const SnapshotStore&) = delete;

  // The current snapshot; nullptr before the first Publish().
  std::shared_ptr<const Snapshot> Load() const {
    absl::MutexLock lock(&mu_);
    return current_;
  }

  void Publish(std::shared_ptr<const Snapshot> snapshot) {
    absl::MutexLock lock(&mu_);
    current_ = std::move(snapshot);
  }

 private:
  mutable absl::Mutex mu_;
  std::shared_ptr<const Snapshot> current_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pathwise::model

#endif  // PATHWISE_MODEL_SNAPSHOT_STORE_H_

// The collector interface and the explicit registry that runs collectors
// (the shape of node_exporter's collectors and Pixie Stirling's source
// connectors): one collector per file, each filling its part of a
// model::Snapshot, each reported by pathwise_collector_success and
// pathwise_collector_duration_seconds.
#ifndef PATHWISE_COLLECTORS_COLLECTOR_H_
#define PATHWISE_COLLECTORS_COLLECTOR_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "model/topology.h"

namespace pathwise::collectors {

class Collector {
 public:
  virtual ~Collector() = default;

  // Stable name, used as the `collector` label.
  virtual absl::string_view name() const = 0;

  // One-time setup. A non-OK status disables the collector for the run
  // (it is then reported with success 0 on every collection).
  virtual absl::Status Init() { return absl::OkStatus(); }

  // Adds this collector's data to *snapshot. Collectors run in registration
  // order, so a later one may read what an earlier one wrote (the I/O
  // collector reads the topology). When an input is missing or malformed,
  // the collector still adds everything it could read and returns the first
  // error (with a count of the others); it must not throw.
  virtual absl::Status Collect(model::Snapshot& snapshot) = 0;
};

// Owns the collectors and runs them. Not thread-safe: one collection loop
// drives it.
class CollectorRegistry {
 public:
  void Add(std::unique_ptr<Collector> collector);

  // Calls Init() on each collector; logs (once) and remembers failures.
  void InitAll();

  // Runs every collector into *snapshot, appending a CollectorResult per
  // collector. Exceptions are caught and turned into failures. A collector's
  // error is logged as one line when it differs from that collector's
  // previous error, so a persistent fault does not flood the log.
  void CollectAll(model::Snapshot& snapshot);

  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    std::unique_ptr<Collector> collector;
    absl::Status init_status;
    std::string last_error;
  };
  std::vector<Entry> entries_;
};

// Accumulates a collector's errors into one status: the first error's message
// plus "(and N more)".
class ErrorList {
 public:
  void Add(const absl::Status& status);
  bool ok() const { return count_ == 0; }
  absl::Status ToStatus() const;

 private:
  absl::Status first_;
  int count_ = 0;
};

}  // namespace pathwise::collectors

#endif  // PATHWISE_COLLECTORS_COLLECTOR_H_

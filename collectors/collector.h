// SPDX-License-Identifier: Apache-2.0
// The source interfaces of one collection (agent/pipeline.h runs them in
// order): a TopologySource scans the NVMe topology, then IoSources read the
// I/O statistics of that topology's paths and heads. Each source fills a
// typed part of the snapshot and is reported by pathwise_collector_success
// and pathwise_collector_duration_seconds under its name().
//
// A source fills everything it could read even when an input is missing or
// malformed, and returns the first error (with a count of the others, see
// ErrorList); it must not throw (the pipeline turns an exception into a
// failure anyway).
#ifndef PATHWISE_COLLECTORS_COLLECTOR_H_
#define PATHWISE_COLLECTORS_COLLECTOR_H_

#include <map>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "model/topology.h"

namespace pathwise::collectors {

// Scans the NVMe topology (subsystems, heads, paths, controllers).
class TopologySource {
 public:
  virtual ~TopologySource() = default;
  // Stable name, used as the `collector` label.
  virtual absl::string_view name() const = 0;
  // Fills an empty *topology with what it could scan.
  virtual absl::Status Read(model::Topology& topology) = 0;
};

// Reads I/O statistics for the devices of `topology` (this collection's,
// possibly partial when the topology source failed). Several I/O sources add
// to the same model::IoReading in order.
class IoSource {
 public:
  virtual ~IoSource() = default;
  // Stable name, used as the `collector` label.
  virtual absl::string_view name() const = 0;
  virtual absl::Status Read(const model::Topology& topology,
                            model::IoReading& io) = 0;
};

// Accumulates a source's errors into one status: the first error's message
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

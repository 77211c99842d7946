// The kernel's own iopolicies (drivers/nvme/host/multipath.c), as selectors:
// numa, round-robin and queue-depth. They learn nothing from completions.
#ifndef PATHWISE_POLICY_KERNEL_SELECTORS_H_
#define PATHWISE_POLICY_KERNEL_SELECTORS_H_

#include <cstdint>
#include <span>
#include <vector>

#include "policy/path_table.h"
#include "policy/selector.h"

namespace pathwise::policy {

// numa: the candidate nearest the submitting CPU's node (distance 10 on the
// same node or when either node is unknown, 20 otherwise), first in list
// order on ties; cached per node until SetPaths, as the kernel caches its
// current path until a path changes.
class NumaSelector final : public Selector {
 public:
  Policy policy() const override { return Policy::kNuma; }
  void SetPaths(std::span<const PathInfo> paths) override;
  int Select(const IoRequest& io) override;
  void OnSubmit(int path, const IoRequest&, int64_t) override {
    table_.Submitted(path);
  }
  void OnComplete(int path, const IoRequest&, const Completion&) override {
    table_.Left(path);
  }
  int inflight(int path) const override { return table_.InflightOrZero(path); }

 private:
  PathTable table_;
  std::vector<int> current_;  // per node + 1 (slot 0: unknown node)
};

// round-robin: the next candidate after the last one chosen, in list order,
// per node of the submitting CPU (as the kernel rotates per node).
class RoundRobinSelector final : public Selector {
 public:
  Policy policy() const override { return Policy::kRoundRobin; }
  void SetPaths(std::span<const PathInfo> paths) override;
  int Select(const IoRequest& io) override;
  void OnSubmit(int path, const IoRequest&, int64_t) override {
    table_.Submitted(path);
  }
  void OnComplete(int path, const IoRequest&, const Completion&) override {
    table_.Left(path);
  }
  int inflight(int path) const override { return table_.InflightOrZero(path); }

 private:
  PathTable table_;
  std::vector<int> last_;  // per node + 1 (slot 0: unknown node)
};

// queue-depth: the candidate with the fewest I/Os in flight, first in list
// order on ties. The kernel counts per controller; a head's paths each have
// their own controller, and a selector sees one head, so it counts per path.
class QueueDepthSelector final : public Selector {
 public:
  Policy policy() const override { return Policy::kQueueDepth; }
  void SetPaths(std::span<const PathInfo> paths) override { table_.Set(paths); }
  int Select(const IoRequest&) override { return table_.LeastInFlight(); }
  void OnSubmit(int path, const IoRequest&, int64_t) override {
    table_.Submitted(path);
  }
  void OnComplete(int path, const IoRequest&, const Completion&) override {
    table_.Left(path);
  }
  int inflight(int path) const override { return table_.InflightOrZero(path); }

 private:
  PathTable table_;
};

}  // namespace pathwise::policy

#endif  // PATHWISE_POLICY_KERNEL_SELECTORS_H_

// SPDX-License-Identifier: Apache-2.0
// The kernel's own iopolicies (drivers/nvme/host/multipath.c), as selectors:
// numa, round-robin and queue-depth. They learn nothing from completions.
// The per-I/O methods are inline: a caller that knows the concrete type
// (VisitSelector) gets them without a call.
#ifndef PATHWISE_POLICY_KERNEL_SELECTORS_H_
#define PATHWISE_POLICY_KERNEL_SELECTORS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "policy/path_table.h"
#include "policy/selector.h"

namespace pathwise::policy {

// What the three have in common: they learn nothing from completions and
// only keep each path's in-flight count (queue-depth's input).
class KernelSelector : public Selector {
 public:
  void OnSubmit(int path, const IoRequest&, int64_t) final {
    table_.Submitted(path);
  }
  void OnComplete(int path, const IoRequest&, const Completion&) final {
    table_.Left(path);
  }
  int inflight(int path) const final { return table_.InflightOrZero(path); }

 protected:
  PathTable table_;
};

// numa: the candidate nearest the submitting CPU's node (distance 10 on the
// same node or when either node is unknown, 20 otherwise), first in list
// order on ties; cached per node until SetPaths, as the kernel caches its
// current path until a path changes.
class NumaSelector final : public KernelSelector {
 public:
  Policy policy() const override { return Policy::kNuma; }
  void SetPaths(std::span<const PathInfo> paths) override;
  int Select(const IoRequest& io) override {
    const size_t slot = NodeSlot(io.numa_node);
    if (slot < current_.size()) {
      const int current = current_[slot];
      if (current >= 0 && table_.is_candidate(current)) return current;
    }
    return Choose(io.numa_node, slot);
  }

 private:
  // Unknown (< 0) nodes share slot 0.
  static size_t NodeSlot(int node) {
    return static_cast<size_t>(std::max(node, -1) + 1);
  }
  int Choose(int node, size_t slot);

  std::vector<int> current_;  // per node slot
};

// round-robin: the next candidate after the last one chosen, in list order,
// per node of the submitting CPU (as the kernel rotates per node).
class RoundRobinSelector final : public KernelSelector {
 public:
  Policy policy() const override { return Policy::kRoundRobin; }
  void SetPaths(std::span<const PathInfo> paths) override;
  int Select(const IoRequest& io) override {
    const size_t slot = static_cast<size_t>(std::max(io.numa_node, -1) + 1);
    if (slot >= last_.size()) last_.resize(slot + 1, kNoPath);
    int& last = last_[slot];
    const int n = table_.size();
    for (int k = 1; k <= n; ++k) {
      const int i = ((last < 0 ? -1 : last) + k + n) % n;
      if (table_.is_candidate(i)) return last = i;
    }
    return kNoPath;
  }

 private:
  std::vector<int> last_;  // per node slot (unknown nodes: slot 0)
};

// queue-depth: the candidate with the fewest I/Os in flight, first in list
// order on ties. The kernel counts per controller; a head's paths each have
// their own controller, and a selector sees one head, so it counts per path.
class QueueDepthSelector final : public KernelSelector {
 public:
  Policy policy() const override { return Policy::kQueueDepth; }
  void SetPaths(std::span<const PathInfo> paths) override { table_.Set(paths); }
  int Select(const IoRequest&) override { return table_.LeastInFlight(); }
};

}  // namespace pathwise::policy

#endif  // PATHWISE_POLICY_KERNEL_SELECTORS_H_

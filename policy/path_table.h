// SPDX-License-Identifier: Apache-2.0
// The bookkeeping every selector shares: the head's paths, the candidates
// (the kernel's rule: usable optimized paths if any, else usable
// non-optimized ones) and each path's in-flight count.
#ifndef PATHWISE_POLICY_PATH_TABLE_H_
#define PATHWISE_POLICY_PATH_TABLE_H_

#include <cstdint>
#include <span>
#include <vector>

#include "policy/selector.h"

namespace pathwise::policy {

class PathTable {
 public:
  // Replaces the paths and recomputes the candidates; returns whether the
  // number of paths changed. In-flight counts of the paths that remain are
  // kept.
  bool Set(std::span<const PathInfo> paths);

  int size() const { return n_; }
  bool Has(int path) const { return path >= 0 && path < n_; }
  const PathInfo& info(int path) const { return info_[path]; }
  // The candidates, in list order.
  const std::vector<int>& candidates() const { return cand_; }
  bool is_candidate(int path) const { return is_cand_[path] != 0; }
  int inflight(int path) const { return inflight_[path]; }
  int InflightOrZero(int path) const { return Has(path) ? inflight_[path] : 0; }

  void Submitted(int path) {
    if (Has(path)) ++inflight_[path];
  }
  void Left(int path) {
    if (Has(path)) --inflight_[path];
  }

  // The candidate with the fewest I/Os in flight, first in list order on
  // ties (the kernel's queue-depth); kNoPath without candidates.
  int LeastInFlight() const {
    int best = kNoPath, depth = 0;
    for (int i : cand_) {
      if (best < 0 || inflight_[i] < depth) {
        best = i;
        depth = inflight_[i];
        if (depth == 0) break;
      }
    }
    return best;
  }

 private:
  int n_ = 0;
  std::vector<PathInfo> info_;
  std::vector<int> cand_;
  std::vector<uint8_t> is_cand_;
  std::vector<int> inflight_;
};

}  // namespace pathwise::policy

#endif  // PATHWISE_POLICY_PATH_TABLE_H_

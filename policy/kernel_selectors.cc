// SPDX-License-Identifier: Apache-2.0
#include "policy/kernel_selectors.h"

namespace pathwise::policy {

void NumaSelector::SetPaths(std::span<const PathInfo> paths) {
  table_.Set(paths);
  // Like nvme_mpath_revalidate_paths(): any path change clears the cached
  // current path, so the next I/O chooses again.
  current_.assign(current_.size(), kNoPath);
}

int NumaSelector::Choose(int node, size_t slot) {
  int best = kNoPath, best_distance = 0;
  for (int i : table_.candidates()) {
    const int pn = table_.info(i).numa_node;
    const int distance = (pn < 0 || node < 0 || pn == node) ? 10 : 20;
    if (best < 0 || distance < best_distance) {
      best = i;
      best_distance = distance;
    }
  }
  if (slot >= current_.size()) current_.resize(slot + 1, kNoPath);
  current_[slot] = best;
  return best;
}

void RoundRobinSelector::SetPaths(std::span<const PathInfo> paths) {
  if (table_.Set(paths)) last_.assign(last_.size(), kNoPath);
}

}  // namespace pathwise::policy

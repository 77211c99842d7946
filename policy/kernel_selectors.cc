#include "policy/kernel_selectors.h"

#include <algorithm>

namespace pathwise::policy {
namespace {

// The per-node slot of a node: unknown (< 0) nodes share slot 0.
int& NodeSlot(std::vector<int>& per_node, int node) {
  const size_t slot = static_cast<size_t>(std::max(node, -1) + 1);
  if (slot >= per_node.size()) per_node.resize(slot + 1, kNoPath);
  return per_node[slot];
}

}  // namespace

void NumaSelector::SetPaths(std::span<const PathInfo> paths) {
  table_.Set(paths);
  // Like nvme_mpath_revalidate_paths(): any path change clears the cached
  // current path, so the next I/O chooses again.
  current_.assign(current_.size(), kNoPath);
}

int NumaSelector::Select(const IoRequest& io) {
  int& current = NodeSlot(current_, io.numa_node);
  if (current >= 0 && table_.Has(current) && table_.is_candidate(current)) {
    return current;
  }
  int best = kNoPath, best_distance = 0;
  for (int i : table_.candidates()) {
    const int pn = table_.info(i).numa_node;
    const int distance =
        (pn < 0 || io.numa_node < 0 || pn == io.numa_node) ? 10 : 20;
    if (best < 0 || distance < best_distance) {
      best = i;
      best_distance = distance;
    }
  }
  current = best;
  return best;
}

void RoundRobinSelector::SetPaths(std::span<const PathInfo> paths) {
  if (table_.Set(paths)) last_.assign(last_.size(), kNoPath);
}

int RoundRobinSelector::Select(const IoRequest& io) {
  int& last = NodeSlot(last_, io.numa_node);
  const int n = table_.size();
  for (int k = 1; k <= n; ++k) {
    const int i = ((last < 0 ? -1 : last) + k + n) % n;
    if (table_.is_candidate(i)) return last = i;
  }
  return kNoPath;
}

}  // namespace pathwise::policy

// SPDX-License-Identifier: Apache-2.0
#include "policy/path_table.h"

namespace pathwise::policy {

bool PathTable::Set(std::span<const PathInfo> paths) {
  const int n = static_cast<int>(paths.size());
  const bool resized = n != n_;
  n_ = n;
  info_.assign(paths.begin(), paths.end());
  inflight_.resize(n, 0);
  cand_.clear();
  for (int i = 0; i < n; ++i) {
    if (info_[i].usable && info_[i].optimized) cand_.push_back(i);
  }
  if (cand_.empty()) {
    for (int i = 0; i < n; ++i) {
      if (info_[i].usable) cand_.push_back(i);
    }
  }
  is_cand_.assign(n, 0);
  for (int i : cand_) is_cand_[i] = 1;
  return resized;
}

}  // namespace pathwise::policy

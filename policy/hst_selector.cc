// SPDX-License-Identifier: Apache-2.0
#include "policy/hst_selector.h"

namespace pathwise::policy {

void HstSelector::SetPaths(std::span<const PathInfo> paths) {
  if (table_.Set(paths)) ewma_.assign(table_.size(), 0);
}

}  // namespace pathwise::policy

// SPDX-License-Identifier: Apache-2.0
#include "policy/selector.h"

#include <type_traits>
#include <utility>

#include "policy/selectors.h"

namespace pathwise::policy {

std::unique_ptr<Selector> MakeSelector(Policy policy,
                                       const PolicyParams& params,
                                       const SelectorOptions& options) {
  return VisitSelector(
      policy, params, options, [](auto& s) -> std::unique_ptr<Selector> {
        return std::make_unique<std::decay_t<decltype(s)>>(std::move(s));
      });
}

}  // namespace pathwise::policy

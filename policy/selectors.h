// SPDX-License-Identifier: Apache-2.0
// Every selector by its concrete type, and VisitSelector: the one mapping
// from a Policy to its selector, for callers that want the concrete type.
#ifndef PATHWISE_POLICY_SELECTORS_H_
#define PATHWISE_POLICY_SELECTORS_H_

#include "policy/hst_selector.h"
#include "policy/kernel_selectors.h"
#include "policy/latency_selector.h"
#include "policy/pathwise_selector.h"
#include "policy/policy.h"
#include "policy/selector.h"

namespace pathwise::policy {

// Makes the selector for `policy` (one of the enumerators) and returns
// f(selector), with `selector` an lvalue of its concrete, final type
// (NumaSelector&, ...). A caller that runs a selector per I/O in a hot loop
// (the simulator) is thus compiled once per concrete type and calls its
// inline per-I/O methods directly; MakeSelector is the same mapping behind
// the virtual interface.
template <typename F>
decltype(auto) VisitSelector(Policy policy, const PolicyParams& params,
                             const SelectorOptions& options, F&& f) {
  switch (policy) {
    case Policy::kNuma: {
      NumaSelector s;
      return f(s);
    }
    case Policy::kRoundRobin: {
      RoundRobinSelector s;
      return f(s);
    }
    case Policy::kQueueDepth: {
      QueueDepthSelector s;
      return f(s);
    }
    case Policy::kLatency: {
      LatencySelector s(params.latency, options);
      return f(s);
    }
    case Policy::kPathwise: {
      PathwiseSelector s(params.pathwise);
      return f(s);
    }
    case Policy::kHst:
      break;
  }
  HstSelector s(params.hst);
  return f(s);
}

}  // namespace pathwise::policy

#endif  // PATHWISE_POLICY_SELECTORS_H_

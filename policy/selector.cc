#include "policy/selector.h"

#include "policy/hst_selector.h"
#include "policy/kernel_selectors.h"
#include "policy/latency_selector.h"
#include "policy/pathwise_selector.h"

namespace pathwise::policy {

std::unique_ptr<Selector> MakeSelector(Policy policy,
                                       const PolicyParams& params,
                                       const SelectorOptions& options) {
  switch (policy) {
    case Policy::kNuma:
      return std::make_unique<NumaSelector>();
    case Policy::kRoundRobin:
      return std::make_unique<RoundRobinSelector>();
    case Policy::kQueueDepth:
      return std::make_unique<QueueDepthSelector>();
    case Policy::kLatency:
      return std::make_unique<LatencySelector>(params.latency, options);
    case Policy::kPathwise:
      return std::make_unique<PathwiseSelector>(params.pathwise);
    case Policy::kHst:
      return std::make_unique<HstSelector>(params.hst);
  }
  return nullptr;
}

}  // namespace pathwise::policy

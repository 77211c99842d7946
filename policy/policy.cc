#include "policy/policy.h"

namespace pathwise::policy {

absl::string_view PolicyName(Policy p) {
  switch (p) {
    case Policy::kNuma:
      return "numa";
    case Policy::kRoundRobin:
      return "round-robin";
    case Policy::kQueueDepth:
      return "queue-depth";
    case Policy::kLatency:
      return "latency";
    case Policy::kPathwise:
      return "pathwise";
    case Policy::kHst:
      return "hst";
  }
  return "?";
}

std::optional<Policy> PolicyFromName(absl::string_view name) {
  for (Policy p : AllPolicies()) {
    if (PolicyName(p) == name) return p;
  }
  return std::nullopt;
}

std::vector<Policy> AllPolicies() {
  return {Policy::kNuma,    Policy::kRoundRobin, Policy::kQueueDepth,
          Policy::kLatency, Policy::kPathwise,   Policy::kHst};
}

}  // namespace pathwise::policy

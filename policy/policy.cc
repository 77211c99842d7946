// SPDX-License-Identifier: Apache-2.0
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

bool IsKernelIopolicy(Policy p) {
  return p == Policy::kNuma || p == Policy::kRoundRobin ||
         p == Policy::kQueueDepth;
}

absl::string_view NotSettableReason(Policy p) {
  switch (p) {
    case Policy::kNuma:
    case Policy::kRoundRobin:
    case Policy::kQueueDepth:
      return "";
    case Policy::kLatency:
      return "a proposed kernel iopolicy, not merged";
    case Policy::kPathwise:
      return "pathwise's own selector (its ublk datapath), not a kernel "
             "iopolicy";
    case Policy::kHst:
      return "dm-multipath's selector, not an NVMe iopolicy";
  }
  return "not a kernel iopolicy";
}

}  // namespace pathwise::policy

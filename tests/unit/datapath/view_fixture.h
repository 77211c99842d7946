// SPDX-License-Identifier: Apache-2.0
// What the datapath's exposition tests share: a namespace path per
// controller (nvme<N>n1 behind ng<N>n1, one subsystem) and the labels its
// per-path series carry under the agent's names.
#ifndef PATHWISE_TESTS_UNIT_DATAPATH_VIEW_FIXTURE_H_
#define PATHWISE_TESTS_UNIT_DATAPATH_VIEW_FIXTURE_H_

#include <string>

#include "datapath/exposition.h"
#include "datapath/namespaces.h"
#include "policy/policy.h"

namespace pathwise::testing_util {

inline datapath::NamespacePath Path(int ctrl) {
  datapath::NamespacePath p;
  p.name = "nvme" + std::to_string(ctrl) + "n1";
  p.generic = "ng" + std::to_string(ctrl) + "n1";
  p.controller = "nvme" + std::to_string(ctrl);
  p.controller_instance = ctrl;
  p.subsysnqn = "nqn.2014-08.org.example:ns";
  p.nsid = 1;
  return p;
}

// The device ublkb0 over Path(0) and Path(1) of one namespace, under
// `policy`, with an empty stats slot per path.
inline datapath::DatapathView TwoPathView(policy::Policy policy) {
  datapath::DatapathView v;
  v.device = "ublkb0";
  v.policy = policy;
  v.group.id = "uuid.0000-1";
  v.group.subsysnqn = "nqn.2014-08.org.example:ns";
  v.group.paths = {Path(0), Path(1)};
  v.stats.paths.resize(2);
  return v;
}

// The labels of Path(0) and Path(1) in subsystem nvme-subsys3 under the
// device ublkb0.
inline constexpr char kP0[] =
    "subsystem=\"nvme-subsys3\",head=\"ublkb0\",path=\"nvme0n1\","
    "controller=\"nvme0\"";
inline constexpr char kP1[] =
    "subsystem=\"nvme-subsys3\",head=\"ublkb0\",path=\"nvme1n1\","
    "controller=\"nvme1\"";

}  // namespace pathwise::testing_util

#endif  // PATHWISE_TESTS_UNIT_DATAPATH_VIEW_FIXTURE_H_

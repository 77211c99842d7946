// SPDX-License-Identifier: Apache-2.0
// The tree `pathwise topology` prints, in the shape of `nvme show-topology`:
// subsystem -> head -> paths, each path with its controller, transport,
// address, controller state and ANA state.
#ifndef PATHWISE_EXPORTERS_TOPOLOGY_TEXT_H_
#define PATHWISE_EXPORTERS_TOPOLOGY_TEXT_H_

#include <string>

#include "model/topology.h"

namespace pathwise::exporters {

// With `scoring` (the scoring stage's output), each path line also shows
// its health, weights per op group (read/write/other) and score, and each
// subsystem the recommended iopolicy.
std::string TopologyToText(const model::Topology& topology,
                           const model::Scoring* scoring = nullptr);

}  // namespace pathwise::exporters

#endif  // PATHWISE_EXPORTERS_TOPOLOGY_TEXT_H_

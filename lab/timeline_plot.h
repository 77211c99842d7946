// SPDX-License-Identifier: Apache-2.0
// A scenario run as a picture (`pathwise lab --scenario F --plot F.svg`):
// per policy, its throughput (MiB/s) and p99 latency over simulated time,
// one panel each, with the phases' boundaries (lab/timeline.h) marked as
// dashed lines. An SVG written by the project, no plotting library; each
// policy is one <g class='series' data-policy='NAME'> holding its lines in
// both panels.
#ifndef PATHWISE_LAB_TIMELINE_PLOT_H_
#define PATHWISE_LAB_TIMELINE_PLOT_H_

#include <string>
#include <vector>

#include "lab/scenario.h"
#include "lab/timeline.h"

namespace pathwise::lab {

// `timelines[i]` is the run of `policies[i]`.
std::string TimelinePlotSvg(const Scenario& sc,
                            const std::vector<policy::Policy>& policies,
                            const std::vector<Phase>& phases,
                            const std::vector<Timeline>& timelines);

}  // namespace pathwise::lab

#endif  // PATHWISE_LAB_TIMELINE_PLOT_H_

// SPDX-License-Identifier: Apache-2.0
// The league table as a picture: for each policy, its throughput against
// the best other policy and its p99 against the lowest, per scenario,
// sorted (an inverse CDF: the height at x is the ratio that x of the family
// is at or below). An SVG written by the project, no plotting library.
#ifndef PATHWISE_LAB_LEAGUE_PLOT_H_
#define PATHWISE_LAB_LEAGUE_PLOT_H_

#include <string>
#include <vector>

#include "lab/league.h"

namespace pathwise::lab {

// A self-contained SVG document (two panels and a legend). Ratios beyond a
// panel's range are drawn at its edge.
std::string LeaguePlotSvg(const std::string& title,
                          const std::vector<ScenarioOutcome>& family);

}  // namespace pathwise::lab

#endif  // PATHWISE_LAB_LEAGUE_PLOT_H_

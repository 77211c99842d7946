// SPDX-License-Identifier: Apache-2.0
// `pathwise lab` output: a table (MiB/s, IOPS, p50/p99/p999 per policy and
// op, throughput over the best's, each path's share) with the verdict of
// lab/verdict.h, CSV or JSON.
#ifndef PATHWISE_LAB_REPORT_H_
#define PATHWISE_LAB_REPORT_H_

#include <string>
#include <vector>

#include "lab/scenario.h"
#include "lab/sim.h"
#include "lab/timeline.h"

namespace pathwise::lab {

// The table, then the verdict (lab/verdict.h). With more than one phase
// (lab/timeline.h), `by_phase[p]` holding each policy's result in phase p,
// a table and a verdict per phase come first, then the whole run's.
std::string FormatTable(
    const Scenario& sc, uint64_t seed, const std::vector<PolicyResult>& results,
    const std::vector<Phase>& phases = {},
    const std::vector<std::vector<PolicyResult>>& by_phase = {});
std::string FormatCsv(const Scenario& sc, uint64_t seed,
                      const std::vector<PolicyResult>& results);
// With phases as FormatTable has them, a "phases" array besides the whole
// run's results; each results array has x_best, and a "verdict" object
// goes with it.
std::string FormatJson(
    const Scenario& sc, uint64_t seed, const std::vector<PolicyResult>& results,
    const std::vector<Phase>& phases = {},
    const std::vector<std::vector<PolicyResult>>& by_phase = {});

}  // namespace pathwise::lab

#endif  // PATHWISE_LAB_REPORT_H_

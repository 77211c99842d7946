// `pathwise lab` output: a table (MiB/s, IOPS, p50/p99/p999 per policy and
// op, each path's share), CSV or JSON.
#ifndef PATHWISE_LAB_REPORT_H_
#define PATHWISE_LAB_REPORT_H_

#include <string>
#include <vector>

#include "lab/scenario.h"
#include "lab/sim.h"

namespace pathwise::lab {

std::string FormatTable(const Scenario& sc, uint64_t seed,
                        const std::vector<PolicyResult>& results);
std::string FormatCsv(const Scenario& sc, uint64_t seed,
                      const std::vector<PolicyResult>& results);
std::string FormatJson(const Scenario& sc, uint64_t seed,
                       const std::vector<PolicyResult>& results);

}  // namespace pathwise::lab

#endif  // PATHWISE_LAB_REPORT_H_

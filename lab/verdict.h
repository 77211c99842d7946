// SPDX-License-Identifier: Apache-2.0
// "Which iopolicy should I set?": from one scenario's (or one phase's)
// results, the best policy a kernel accepts (policy::IsKernelIopolicy) and
// the best of all, by throughput (MiB/s, reads and writes together, as the
// league counts it). Pure arithmetic on results.
#ifndef PATHWISE_LAB_VERDICT_H_
#define PATHWISE_LAB_VERDICT_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "lab/sim.h"

namespace pathwise::lab {

struct Verdict {
  // Indices into the results; nullopt when no policy completed an I/O (or,
  // for best_settable, when no kernel iopolicy was run).
  std::optional<size_t> best_settable;
  std::optional<size_t> best_overall;
  // The other kernel iopolicies run, best first: index and the best
  // settable's throughput over theirs (0 when theirs is 0: "completed
  // nothing").
  std::vector<std::pair<size_t, double>> settable_ratios;
  // The best overall's throughput over the best settable's (1 when the
  // best overall is settable).
  double overall_vs_settable = 1;
};

// The first policy in `results`' order wins a tie.
Verdict Decide(const std::vector<PolicyResult>& results);

// Two lines:
//   best policy you can set: queue-depth (1.71× round-robin, 2.05× numa)
//   best overall: pathwise, 1.12× queue-depth (pathwise's own selector ...)
// A best overall within 1 % of the best settable is a tie that the
// settable one wins: "best overall: queue-depth, the best you can set
// (pathwise is within 1 %)".
std::string VerdictLines(const std::vector<PolicyResult>& results,
                         const Verdict& v);

// Each policy's throughput over the best's (the table's ×best column); all
// 0 when nothing completed.
std::vector<double> XBest(const std::vector<PolicyResult>& results);

}  // namespace pathwise::lab

#endif  // PATHWISE_LAB_VERDICT_H_

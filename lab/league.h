// SPDX-License-Identifier: Apache-2.0
// The league table over a scenario family: how each policy fares against
// the best in every scenario, summarised over the family. Pure arithmetic
// on simulation results (lab/sim.h), so it tests without simulating.
//
// Per scenario, a policy's throughput is its MiB/s, reads and writes
// together; its tail is the p99 (p999) of the op that completed more I/Os.
// Its throughput ratio is against the best policy of the scenario (itself
// included, so the best scores 1); against the best *other* policy
// (`vs_best_other`) the best may score above 1: the selector's goals are
// stated that way. Tail ratios are against the lowest tail of the
// scenario (1 is the best, higher is worse). A scenario with scripted
// events may also hold each policy's result per phase (the spans between
// events, lab/timeline.h), for the selector's tail rule read per phase.
#ifndef PATHWISE_LAB_LEAGUE_H_
#define PATHWISE_LAB_LEAGUE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "lab/sim.h"
#include "policy/policy.h"

namespace pathwise::lab {

// One scenario's results: one PolicyResult per policy, the same policies
// in every scenario.
struct ScenarioOutcome {
  std::string name;
  std::vector<PolicyResult> results;
  // Per phase, when recorded (RunFamily's by_phase, and more than one
  // phase): its label ("p0 down") and every policy's result of the I/Os
  // that completed in it, in the order of `results`.
  std::vector<std::string> phase_labels;
  std::vector<std::vector<PolicyResult>> phases;
};

struct Loss {
  std::string scenario;
  double ratio = 0;  // throughput / the best other policy's
};

struct LeagueEntry {
  policy::Policy policy = policy::Policy::kNuma;
  // Throughput / the scenario's best, over the family.
  double median = 0, p5 = 0, worst = 0;
  // Throughput / the best other policy's: its 5th percentile and worst.
  double vs_best_other_p5 = 0, vs_best_other_worst = 0;
  // Scenarios with vs_best_other >= 0.97, as a share of the family.
  double share_within_3pct = 0;
  // Tail ratios (>= 1): median and worst over the family.
  double p99_median = 0, p99_worst = 0, p999_median = 0, p999_worst = 0;
  // Scenarios where it is more than 3 % below the best other policy,
  // worst first.
  std::vector<Loss> losses;
};

// Throughput of a run: MiB/s, reads and writes together.
double Throughput(const PolicyResult& r);
// The op that completed more I/Os (reads on a tie): its tail is the run's.
const OpResult& MainOp(const PolicyResult& r);

// One entry per policy of the outcomes, in their order; empty for no
// outcomes. Scenarios where no policy completed an I/O are left out.
std::vector<LeagueEntry> League(const std::vector<ScenarioOutcome>& family);

// The selector's goals on a family: pathwise >= 0.97x the best other
// policy's throughput in at least 95 % of the scenarios and never below
// 0.90x; its p99 at most 1.1x the lowest p99 wherever its throughput is
// within 3 % of the best other's.
//
// Beside the goal, the same tail rule read per phase: a whole run's p99
// mixes its phases, so a policy that serves more I/Os in a bad phase (a
// lossy path's I/Os moved to a slower one) has more of the run's slow I/Os
// than one that served few there, even where each of its phases' tails is
// the lowest. Per phase, a contest counts where pathwise's throughput in
// it is within 3 % of the best other policy's and its main op completed
// kPhaseTailIos I/Os (a p99 of fewer is their slowest), against the lowest
// p99 of the policies that completed as many.
inline constexpr uint64_t kPhaseTailIos = 100;
struct SelectorGoals {
  double share_within_3pct = 0;      // goal >= 0.95
  double worst = 0;                  // goal >= 0.90
  double worst_p99_where_close = 0;  // goal <= 1.1
  std::string worst_scenario, worst_p99_scenario;
  // Scenarios where the tail rule applied, where it was missed, and where
  // against only the policies that served at least 0.97x pathwise's
  // throughput (a policy that served less had less queued to complete).
  int p99_judged = 0, p99_missed = 0, p99_missed_comparable = 0;
  // The rule per phase: phases judged and missed, the worst ratio and
  // where ("scenario: phase label"); and missed against only the policies
  // that served at least 0.97x pathwise's throughput in the phase.
  int phase_p99_judged = 0, phase_p99_missed = 0;
  int phase_p99_missed_comparable = 0;
  double worst_phase_p99 = 0;
  std::string worst_phase_p99_where;
  bool met() const {
    return share_within_3pct >= 0.95 && worst >= 0.90 &&
           worst_p99_where_close <= 1.1;
  }
};
// Requires `pathwise` among the family's policies; all zero otherwise.
SelectorGoals CheckSelectorGoals(const std::vector<ScenarioOutcome>& family);

}  // namespace pathwise::lab

#endif  // PATHWISE_LAB_LEAGUE_H_

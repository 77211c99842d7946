// SPDX-License-Identifier: Apache-2.0
// The selector on a fast family: pathwise against the best other policy on
// drawn scenarios it was not tuned on (this family is seed 3; the league
// benchmark, bench/lab_league.sh, runs 300 of seed 2).
//
// The goals (>= 0.97x the best other policy in 95 % of the scenarios,
// never below 0.90x, p99 <= 1.1x the lowest where within 3 %) are not all
// met yet: on this family the selector measures 95.0 %, worst 0.898
// (gen-3-35) and a p99 1.88x the lowest (over 1.1x in 9 of 57 scenarios;
// per phase, against the policies at 0.97x its throughput there, in 26 of
// 293). (Before each op group had its own unloaded latency: 93.3 %, 0.857,
// 9 of 56, 29 of 284. Before the expected delay ranked saturated paths,
// the probes had a budget and the unloaded latency came from I/Os sent to
// an empty path: 91.7 %, 0.853, 3.51x.)
// Until it meets them, this test holds it to that measured floor, less a
// margin, so that a change that makes it worse over the family fails here; the
// table in the failure message says where.
#include "lab/family.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lab/generate.h"
#include "lab/league.h"
#include "policy/policy.h"

namespace pathwise::lab {
namespace {

constexpr int kScenarios = 60;
constexpr uint64_t kSeed = 3;

TEST(Family, PathwiseMeetsTheSelectorGoals) {
  std::vector<Scenario> scenarios;
  for (int i = 0; i < kScenarios; ++i) {
    scenarios.push_back(DrawScenario(kSeed, i));
  }
  const std::vector<ScenarioOutcome> family =
      RunFamily(scenarios, policy::AllPolicies(), /*jobs=*/2,
                /*by_phase=*/true);
  const std::vector<LeagueEntry> league = League(family);
  const SelectorGoals g = CheckSelectorGoals(family);
  const std::string table = FormatLeague(
      "family seed 3, " + std::to_string(kScenarios) + " scenarios", family,
      league, 20);
  // The simulator is deterministic: the margins are for changes of the
  // selector that trade one scenario for another, not for noise.
  EXPECT_GE(g.share_within_3pct, 0.93) << table;     // goal 0.95
  EXPECT_GE(g.worst, 0.87) << table;                 // goal 0.90
  EXPECT_LE(g.worst_p99_where_close, 2.2) << table;  // goal 1.1
  // The tail rule's misses, whole runs and phases (measured 9 of 57 and,
  // against the policies at 0.97x its throughput per phase, 23 of 297;
  // within 3 % in 95.0 %, worst 0.903).
  EXPECT_LE(g.p99_missed, 11) << table;
  EXPECT_GE(g.phase_p99_judged, 260) << table;
  EXPECT_LE(g.phase_p99_missed_comparable, 32) << table;
  // And it stays the best policy over the family by its median.
  for (const LeagueEntry& e : league) {
    if (e.policy == policy::Policy::kPathwise) {
      EXPECT_GE(e.median, 0.99) << table;
    }
  }
}

}  // namespace
}  // namespace pathwise::lab

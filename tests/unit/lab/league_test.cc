// The league table's arithmetic on hand-made results: ratios against the
// best and the best other policy, quantiles, tails, and the losses listed.
#include "lab/league.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pathwise::lab {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::Field;

PolicyResult Result(policy::Policy p, double mib_s, double p99_ms) {
  PolicyResult r;
  r.policy = p;
  r.ops[0].mib_s = mib_s;
  r.ops[0].ios = mib_s > 0 ? 1000 : 0;
  r.ops[0].p99_ms = p99_ms;
  r.ops[0].p999_ms = 2 * p99_ms;
  return r;
}

ScenarioOutcome Outcome(const std::string& name, double rr, double pw,
                        double hst, double rr_p99, double pw_p99,
                        double hst_p99) {
  using policy::Policy;
  return {name,
          {Result(Policy::kRoundRobin, rr, rr_p99),
           Result(Policy::kPathwise, pw, pw_p99),
           Result(Policy::kHst, hst, hst_p99)}};
}

TEST(League, RatiosQuantilesTailsAndLosses) {
  const std::vector<ScenarioOutcome> family = {
      Outcome("a", 100, 96, 50, 10, 5, 20),
      Outcome("b", 100, 120, 60, 10, 10, 10),
      Outcome("c", 80, 80, 100, 10, 20, 10),
      Outcome("nothing", 0, 0, 0, 0, 0, 0),  // no contest: left out
  };
  const std::vector<LeagueEntry> t = League(family);
  ASSERT_EQ(t.size(), 3u);
  const LeagueEntry& pw = t[1];
  EXPECT_EQ(pw.policy, policy::Policy::kPathwise);
  // Against the best: 0.96, 1, 0.8.
  EXPECT_DOUBLE_EQ(pw.median, 0.96);
  EXPECT_DOUBLE_EQ(pw.p5, 0.8);
  EXPECT_DOUBLE_EQ(pw.worst, 0.8);
  // Against the best other: 0.96, 1.2, 0.8; one of three within 3 %.
  EXPECT_DOUBLE_EQ(pw.vs_best_other_worst, 0.8);
  EXPECT_DOUBLE_EQ(pw.share_within_3pct, 1.0 / 3);
  EXPECT_THAT(pw.losses, ElementsAre(Field(&Loss::scenario, "c"),
                                     Field(&Loss::scenario, "a")));
  // Tails against the lowest: 1, 1, 2.
  EXPECT_DOUBLE_EQ(pw.p99_median, 1);
  EXPECT_DOUBLE_EQ(pw.p99_worst, 2);
  EXPECT_DOUBLE_EQ(pw.p999_worst, 2);
  // round-robin: best in a (by 100/96 over the others), 0.83 in b, 0.8 in c.
  const LeagueEntry& rr = t[0];
  EXPECT_DOUBLE_EQ(rr.worst, 0.8);
  EXPECT_THAT(rr.vs_best_other_worst, DoubleNear(0.8, 1e-12));
  EXPECT_EQ(rr.losses.size(), 2u);
  EXPECT_DOUBLE_EQ(rr.p99_worst, 2);  // 10 against pathwise's 5 in a
  EXPECT_TRUE(League({}).empty());
}

}  // namespace
}  // namespace pathwise::lab

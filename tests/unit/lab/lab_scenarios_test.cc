// SPDX-License-Identifier: Apache-2.0
// The shipped scenarios against the claims (label `lab`).
// loss-schedule-latency-bound.scn is not run here (minutes of CPU); its
// table is in lab/README.md.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "lab/lab_cli.h"
#include "lab/scenario.h"
#include "lab/sim.h"

namespace pathwise::lab {
namespace {

struct Mibs {
  std::map<policy::Policy, double> v;
  double operator[](policy::Policy p) const { return v.at(p); }
};

Mibs RunScenario(const std::string& file,
                 std::vector<policy::Policy> policies) {
  absl::StatusOr<Scenario> sc =
      LoadScenario(std::string(PATHWISE_LAB_SCENARIOS) + "/" + file);
  EXPECT_TRUE(sc.ok()) << sc.status();
  Mibs m;
  if (!sc.ok()) return m;
  for (const PolicyResult& r : RunPolicies(*sc, policies, sc->seed, 0)) {
    m.v[r.policy] = r.ops[0].mib_s + r.ops[1].mib_s;
  }
  return m;
}

// pathwise is at least as good as the best other policy, within 2 %, in
// every shipped scenario (its rule is the same everywhere: fill the
// lowest-latency path up to its knee, then the next; see lab/README.md).
void ExpectPathwiseBest(const Mibs& m) {
  for (const auto& [p, mibs] : m.v) {
    EXPECT_GE(m[policy::Policy::kPathwise], 0.98 * mibs)
        << "pathwise against " << policy::PolicyName(p);
  }
}

// Each issue claim the model shows is asserted. For a claim it does not
// show, the test asserts the order the model does measure (so a model
// change that flips it fails here, and the README must be updated with
// it); lab/README.md says why the model measures it.

// delay30.scn: the fast path is capacity-bound (the target serves 64 I/Os
// at a time). Measured (seed 1): numa 46.3, round-robin 86.6, queue-depth
// 148.2, latency 123.6, pathwise 158.6, hst 135.2 MiB/s.
TEST(ShippedScenarioTest, Delay30CapacityBound) {
  const Mibs m = RunScenario("delay30.scn", policy::AllPolicies());
  ExpectPathwiseBest(m);
  // Claims that hold.
  EXPECT_GE(m[policy::Policy::kPathwise], m[policy::Policy::kLatency]);
  EXPECT_GT(m[policy::Policy::kQueueDepth], m[policy::Policy::kRoundRobin]);
  EXPECT_GT(m[policy::Policy::kRoundRobin], m[policy::Policy::kNuma]);
  // pathwise keeps the fast path about its knee and gives the slow path
  // the rest: ~5 % above queue-depth's even split (the best split is
  // ~10 % above it, lab/README.md), and above the latency-steered hst,
  // which starves the slow path.
  EXPECT_GE(m[policy::Policy::kPathwise] / m[policy::Policy::kQueueDepth],
            1.05);
  EXPECT_GE(m[policy::Policy::kPathwise] / m[policy::Policy::kHst], 1.1);
  // Claims that do not hold: latency > queue-depth, pathwise/queue-depth >=
  // 1.5 and pathwise/round-robin >= 3. With the fast path saturated, no
  // split of 384 I/Os does better than ~10 % over queue-depth.
  EXPECT_GT(m[policy::Policy::kQueueDepth], m[policy::Policy::kLatency]);
  EXPECT_LT(m[policy::Policy::kPathwise] / m[policy::Policy::kQueueDepth], 1.5);
  EXPECT_LT(m[policy::Policy::kPathwise] / m[policy::Policy::kRoundRobin], 3.0);
}

// delay30-latency-bound.scn: the target has no concurrency limit. Measured:
// numa 46.3, round-robin 86.6, queue-depth 349.3, latency 289.0, pathwise
// 650.0, hst 610.3 MiB/s.
TEST(ShippedScenarioTest, Delay30LatencyBound) {
  const Mibs m =
      RunScenario("delay30-latency-bound.scn", policy::AllPolicies());
  ExpectPathwiseBest(m);
  EXPECT_GE(m[policy::Policy::kPathwise], m[policy::Policy::kLatency]);
  EXPECT_GT(m[policy::Policy::kQueueDepth], m[policy::Policy::kRoundRobin]);
  EXPECT_GT(m[policy::Policy::kRoundRobin], m[policy::Policy::kNuma]);
  EXPECT_GE(m[policy::Policy::kPathwise] / m[policy::Policy::kQueueDepth], 1.5);
  EXPECT_GE(m[policy::Policy::kPathwise] / m[policy::Policy::kRoundRobin], 3.0);
  // Does not hold: latency > queue-depth. Weighting the rate by 1/latency
  // equalises in-flight counts (Little's law), which is what queue-depth
  // does; over 600 s the two are equal (350.0 vs 349.3), and in 60 s the
  // latency policy's first 15 s window, spent as round-robin, costs it.
  EXPECT_LT(m[policy::Policy::kLatency], m[policy::Policy::kQueueDepth]);
}

// loss-schedule.scn (capacity-bound, like delay30.scn). Measured:
// numa 89.6, round-robin 179.3, queue-depth 208.2, latency 175.8, pathwise
// 206.0, hst 203.4 MiB/s.
TEST(ShippedScenarioTest, LossSchedule) {
  const Mibs m = RunScenario("loss-schedule.scn", policy::AllPolicies());
  ExpectPathwiseBest(m);
  EXPECT_GT(m[policy::Policy::kQueueDepth], m[policy::Policy::kRoundRobin]);
  EXPECT_GT(m[policy::Policy::kPathwise], m[policy::Policy::kRoundRobin]);
  EXPECT_GT(m[policy::Policy::kPathwise], m[policy::Policy::kHst]);
  // Does not hold: pathwise >= queue-depth. Both paths are past their knee
  // all the time, where pathwise balances in-flight counts as queue-depth
  // does, but it also drains the lossy path now and then to re-measure its
  // base (its rate fell): 1.1 % below.
  EXPECT_LT(m[policy::Policy::kPathwise], m[policy::Policy::kQueueDepth]);
}

// symmetric.scn. Measured: round-robin, queue-depth, pathwise and hst
// 250.0, latency 242.3, numa 125.0 MiB/s.
TEST(ShippedScenarioTest, SymmetricPathwiseWithinFivePercentOfRoundRobin) {
  const Mibs m = RunScenario("symmetric.scn", policy::AllPolicies());
  ExpectPathwiseBest(m);
  EXPECT_NEAR(m[policy::Policy::kPathwise] / m[policy::Policy::kRoundRobin],
              1.0, 0.05);
}

}  // namespace
}  // namespace pathwise::lab

// SPDX-License-Identifier: Apache-2.0
// The iopolicy actuator's decisions as pure logic, on a fake clock (the
// times passed in): hold, min interval, one decision per recommendation,
// scope by name or NQN, policies the kernel refused, restore bookkeeping.
#include "control/iopolicy_decider.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "absl/time/time.h"
#include "model/topology.h"

namespace pathwise::control {
namespace {

using model::DecisionResult;
using model::Iopolicy;

const absl::Time kT0 = absl::FromUnixSeconds(1'800'000'000);
absl::Time At(double seconds) { return kT0 + absl::Seconds(seconds); }

model::Subsystem Sub(Iopolicy current, std::string name = "nvme-subsys0",
                     std::string nqn = "nqn.2026-11.io.pathwise:testbed") {
  model::Subsystem s;
  s.name = std::move(name);
  s.nqn = std::move(nqn);
  s.iopolicy = current;
  return s;
}

model::Scoring Advice(Iopolicy p, const std::string& sub = "nvme-subsys0") {
  model::Scoring sc;
  sc.iopolicy_recommended[sub] = {p,
                                  "asymmetric paths: latency imbalance 9.00"};
  return sc;
}

IopolicyDecider Decider(model::ActuateMode mode = model::ActuateMode::kOn,
                        std::string regex = ".*") {
  IopolicyActuatorConfig c;
  c.mode = mode;
  c.hold = absl::Seconds(3);
  c.min_interval = absl::Seconds(60);
  c.subsystems = std::move(regex);
  absl::StatusOr<IopolicyDecider> d = IopolicyDecider::Create(c);
  EXPECT_TRUE(d.ok()) << d.status();
  return *std::move(d);
}

TEST(IopolicyDeciderTest, ARecommendationMustHoldBeforeItIsPlanned) {
  IopolicyDecider d = Decider();
  const model::Scoring qd = Advice(Iopolicy::kQueueDepth);
  const model::Subsystem numa = Sub(Iopolicy::kNuma);
  EXPECT_FALSE(d.Plan(numa, &qd, At(0)));
  EXPECT_FALSE(d.Plan(numa, &qd, At(1)));
  EXPECT_FALSE(d.Plan(numa, &qd, At(2.9)));
  std::optional<IopolicyPlan> p = d.Plan(numa, &qd, At(3));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->subsystem, "nvme-subsys0");
  EXPECT_EQ(p->from, Iopolicy::kNuma);
  EXPECT_EQ(p->to, Iopolicy::kQueueDepth);
  EXPECT_EQ(p->reason,
            "advised queue-depth for 3.0s (hold 3s): asymmetric paths: "
            "latency imbalance 9.00");
  EXPECT_FALSE(p->restore);
}

TEST(IopolicyDeciderTest, AChangingRecommendationRestartsTheHold) {
  IopolicyDecider d = Decider();
  const model::Subsystem numa = Sub(Iopolicy::kNuma);
  const model::Scoring qd = Advice(Iopolicy::kQueueDepth);
  const model::Scoring rr = Advice(Iopolicy::kRoundRobin);
  const model::Scoring keep = Advice(Iopolicy::kNuma);
  EXPECT_FALSE(d.Plan(numa, &qd, At(0)));
  EXPECT_FALSE(d.Plan(numa, &rr, At(2)));    // another policy: hold anew
  EXPECT_FALSE(d.Plan(numa, &qd, At(4)));    // back: anew again
  EXPECT_FALSE(d.Plan(numa, &keep, At(5)));  // nothing to change
  EXPECT_FALSE(d.Plan(numa, &qd, At(6)));
  EXPECT_FALSE(d.Plan(numa, &qd, At(8.5)));
  EXPECT_TRUE(d.Plan(numa, &qd, At(9)));
  // No recommendation at all also ends the hold.
  IopolicyDecider d2 = Decider();
  EXPECT_FALSE(d2.Plan(numa, &qd, At(0)));
  EXPECT_FALSE(d2.Plan(numa, nullptr, At(2)));
  EXPECT_FALSE(d2.Plan(numa, &qd, At(4)));
  EXPECT_FALSE(d2.Plan(numa, &qd, At(6.9)));
  EXPECT_TRUE(d2.Plan(numa, &qd, At(7)));
}

TEST(IopolicyDeciderTest, OneDecisionPerRecommendationAndMinInterval) {
  IopolicyDecider d = Decider();
  const model::Scoring qd = Advice(Iopolicy::kQueueDepth);
  const model::Scoring rr = Advice(Iopolicy::kRoundRobin);
  const model::Scoring numa_advice = Advice(Iopolicy::kNuma);
  EXPECT_FALSE(d.Plan(Sub(Iopolicy::kNuma), &qd, At(0)));
  std::optional<IopolicyPlan> p = d.Plan(Sub(Iopolicy::kNuma), &qd, At(3));
  ASSERT_TRUE(p);
  d.Record(*p, DecisionResult::kApplied, At(3));
  // Applied: the kernel has it now; nothing more to do.
  EXPECT_FALSE(d.Plan(Sub(Iopolicy::kQueueDepth), &qd, At(4)));
  // The advice turns to round-robin and holds, but the last change was
  // under a minute ago: it waits for min_interval, then goes.
  EXPECT_FALSE(d.Plan(Sub(Iopolicy::kQueueDepth), &rr, At(10)));
  EXPECT_FALSE(d.Plan(Sub(Iopolicy::kQueueDepth), &rr, At(20)));
  EXPECT_FALSE(d.Plan(Sub(Iopolicy::kQueueDepth), &rr, At(62.9)));
  p = d.Plan(Sub(Iopolicy::kQueueDepth), &rr, At(63));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->from, Iopolicy::kQueueDepth);
  EXPECT_EQ(p->to, Iopolicy::kRoundRobin);
  EXPECT_NE(p->reason.find("advised round-robin for 53.0s"), std::string::npos)
      << p->reason;
}

TEST(IopolicyDeciderTest, AFailedDecisionIsNotRetriedUntilTheAdviceChanges) {
  IopolicyDecider d = Decider();
  const model::Subsystem numa = Sub(Iopolicy::kNuma);
  const model::Scoring qd = Advice(Iopolicy::kQueueDepth);
  const model::Scoring keep = Advice(Iopolicy::kNuma);
  d.Plan(numa, &qd, At(0));
  std::optional<IopolicyPlan> p = d.Plan(numa, &qd, At(3));
  ASSERT_TRUE(p);
  d.Record(*p, DecisionResult::kFailed, At(3));
  for (int t = 4; t < 300; t += 7) {
    EXPECT_FALSE(d.Plan(numa, &qd, At(t))) << t;
  }
  // The advice changes and comes back: a new decision, held again, and
  // min_interval after the failed attempt has long passed.
  EXPECT_FALSE(d.Plan(numa, &keep, At(300)));
  EXPECT_FALSE(d.Plan(numa, &qd, At(301)));
  EXPECT_TRUE(d.Plan(numa, &qd, At(304)));
  // Nothing was applied, so there is nothing to restore.
  EXPECT_TRUE(d.RestorePlans().empty());
}

TEST(IopolicyDeciderTest, DryRunDecidesOncePerRecommendation) {
  IopolicyDecider d = Decider(model::ActuateMode::kDryRun);
  const model::Subsystem numa = Sub(Iopolicy::kNuma);
  const model::Scoring qd = Advice(Iopolicy::kQueueDepth);
  d.Plan(numa, &qd, At(0));
  std::optional<IopolicyPlan> p = d.Plan(numa, &qd, At(3));
  ASSERT_TRUE(p);
  d.Record(*p, DecisionResult::kDryRun, At(3));
  // The kernel still has numa (nothing was written): not decided again.
  for (int t = 4; t < 600; t += 11) EXPECT_FALSE(d.Plan(numa, &qd, At(t)));
  EXPECT_TRUE(d.RestorePlans().empty());
}

TEST(IopolicyDeciderTest, TheHoldCountsOnlyWhileAChangeIsWanted) {
  IopolicyDecider d = Decider();
  const model::Scoring rr = Advice(Iopolicy::kRoundRobin);
  // Round-robin advised for a minute while the subsystem has it...
  for (int t = 0; t < 60; ++t) {
    EXPECT_FALSE(d.Plan(Sub(Iopolicy::kRoundRobin), &rr, At(t)));
  }
  // ...then someone sets numa: the hold starts now, not a minute ago.
  EXPECT_FALSE(d.Plan(Sub(Iopolicy::kNuma), &rr, At(60)));
  EXPECT_FALSE(d.Plan(Sub(Iopolicy::kNuma), &rr, At(62)));
  EXPECT_TRUE(d.Plan(Sub(Iopolicy::kNuma), &rr, At(63)));
}

TEST(IopolicyDeciderTest, AHandSetPolicyIsNotOverriddenWhileTheAdviceStands) {
  IopolicyDecider d = Decider();
  const model::Scoring qd = Advice(Iopolicy::kQueueDepth);
  const model::Scoring rr = Advice(Iopolicy::kRoundRobin);
  d.Plan(Sub(Iopolicy::kNuma), &qd, At(0));
  std::optional<IopolicyPlan> p = d.Plan(Sub(Iopolicy::kNuma), &qd, At(3));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->advised, Iopolicy::kQueueDepth);
  d.Record(*p, DecisionResult::kApplied, At(3));
  EXPECT_FALSE(d.Plan(Sub(Iopolicy::kQueueDepth), &qd, At(4)));
  // An administrator goes back to numa: left alone, however long.
  for (int t = 5; t < 900; t += 7) {
    EXPECT_FALSE(d.Plan(Sub(Iopolicy::kNuma), &qd, At(t))) << t;
  }
  // A new recommendation is a new decision (after its hold).
  EXPECT_FALSE(d.Plan(Sub(Iopolicy::kNuma), &rr, At(900)));
  p = d.Plan(Sub(Iopolicy::kNuma), &rr, At(903));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->to, Iopolicy::kRoundRobin);
}

TEST(IopolicyDeciderTest, ThePolicyChangingUnderneathRestartsTheHold) {
  IopolicyDecider d = Decider();
  const model::Scoring qd = Advice(Iopolicy::kQueueDepth);
  EXPECT_FALSE(d.Plan(Sub(Iopolicy::kRoundRobin), &qd, At(0)));
  EXPECT_FALSE(d.Plan(Sub(Iopolicy::kRoundRobin), &qd, At(2)));
  // Someone sets numa: queue-depth is still wanted, from numa now.
  EXPECT_FALSE(d.Plan(Sub(Iopolicy::kNuma), &qd, At(2.5)));
  EXPECT_FALSE(d.Plan(Sub(Iopolicy::kNuma), &qd, At(5)));
  std::optional<IopolicyPlan> p = d.Plan(Sub(Iopolicy::kNuma), &qd, At(5.5));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->from, Iopolicy::kNuma);
}

TEST(IopolicyDeciderTest, OffDecidesNothing) {
  IopolicyDecider d = Decider(model::ActuateMode::kOff);
  const model::Scoring qd = Advice(Iopolicy::kQueueDepth);
  for (int t = 0; t < 100; t += 5) {
    EXPECT_FALSE(d.Plan(Sub(Iopolicy::kNuma), &qd, At(t)));
  }
}

TEST(IopolicyDeciderTest, ScopeIsTheWholeNameOrTheWholeNqn) {
  IopolicyDecider by_name = Decider(model::ActuateMode::kOn, "nvme-subsys1");
  EXPECT_TRUE(by_name.InScope(Sub(Iopolicy::kNuma, "nvme-subsys1")));
  EXPECT_FALSE(by_name.InScope(Sub(Iopolicy::kNuma, "nvme-subsys10")));
  EXPECT_FALSE(by_name.InScope(Sub(Iopolicy::kNuma, "nvme-subsys0")));
  IopolicyDecider by_nqn =
      Decider(model::ActuateMode::kOn, "nqn\\.2026-11\\.io\\.pathwise:.*");
  EXPECT_TRUE(by_nqn.InScope(Sub(Iopolicy::kNuma, "nvme-subsys7")));
  EXPECT_FALSE(by_nqn.InScope(
      Sub(Iopolicy::kNuma, "nvme-subsys7", "nqn.2014-08.org.example:x")));
  // Out of scope: never planned.
  const model::Scoring qd = Advice(Iopolicy::kQueueDepth);
  const model::Subsystem other = Sub(Iopolicy::kNuma, "nvme-subsys0");
  for (int t = 0; t < 60; t += 3) {
    EXPECT_FALSE(by_name.Plan(other, &qd, At(t)));
  }
}

TEST(IopolicyDeciderTest, ABadRegexIsAnError) {
  IopolicyActuatorConfig c;
  c.subsystems = "nvme-subsys[";
  absl::StatusOr<IopolicyDecider> d = IopolicyDecider::Create(c);
  EXPECT_FALSE(d.ok());
  EXPECT_FALSE(SubsystemRegexProblem("(").empty());
  EXPECT_EQ(SubsystemRegexProblem("nvme-subsys[0-3]"), "");
}

TEST(IopolicyDeciderTest, AnUnknownCurrentPolicyIsLeftAlone) {
  IopolicyDecider d = Decider();
  model::Subsystem s = Sub(Iopolicy::kUnknown);
  s.unknown_iopolicy = "latency";  // a policy this version does not know
  const model::Scoring qd = Advice(Iopolicy::kQueueDepth);
  for (int t = 0; t < 60; t += 3) EXPECT_FALSE(d.Plan(s, &qd, At(t)));
  // Nor does an advice of "keep what you do not know" (kUnknown) plan.
  const model::Scoring keep = Advice(Iopolicy::kUnknown);
  for (int t = 0; t < 60; t += 3) {
    EXPECT_FALSE(d.Plan(Sub(Iopolicy::kNuma), &keep, At(t)));
  }
}

TEST(IopolicyDeciderTest, ARefusedQueueDepthGivesWayToRoundRobinAtOnce) {
  IopolicyDecider d = Decider();
  const model::Subsystem numa = Sub(Iopolicy::kNuma);
  const model::Scoring qd = Advice(Iopolicy::kQueueDepth);
  d.Plan(numa, &qd, At(0));
  std::optional<IopolicyPlan> p = d.Plan(numa, &qd, At(3));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->to, Iopolicy::kQueueDepth);
  d.Record(*p, DecisionResult::kRefused, At(3));
  EXPECT_TRUE(d.Refused("nvme-subsys0", Iopolicy::kQueueDepth));
  p = d.Plan(numa, &qd, At(3));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->to, Iopolicy::kRoundRobin);
  EXPECT_NE(p->reason.find("the kernel refused queue-depth, so round-robin"),
            std::string::npos)
      << p->reason;
  d.Record(*p, DecisionResult::kApplied, At(3));
  // queue-depth is never tried again while the advice stays, nor after it
  // changes and comes back.
  const model::Subsystem rr = Sub(Iopolicy::kRoundRobin);
  EXPECT_FALSE(d.Plan(rr, &qd, At(4)));
  const model::Scoring keep = Advice(Iopolicy::kRoundRobin);
  EXPECT_FALSE(d.Plan(rr, &keep, At(10)));
  for (int t = 11; t < 400; t += 13) EXPECT_FALSE(d.Plan(rr, &qd, At(t))) << t;
}

TEST(IopolicyDeciderTest, RestoreGoesBackToWhatWasFound) {
  IopolicyDecider d = Decider();
  const model::Scoring qd = Advice(Iopolicy::kQueueDepth);
  const model::Scoring rr = Advice(Iopolicy::kRoundRobin);
  d.Plan(Sub(Iopolicy::kNuma), &qd, At(0));
  std::optional<IopolicyPlan> p = d.Plan(Sub(Iopolicy::kNuma), &qd, At(3));
  ASSERT_TRUE(p);
  d.Record(*p, DecisionResult::kApplied, At(3));
  d.Plan(Sub(Iopolicy::kQueueDepth), &rr, At(10));
  p = d.Plan(Sub(Iopolicy::kQueueDepth), &rr, At(70));
  ASSERT_TRUE(p);
  d.Record(*p, DecisionResult::kApplied, At(70));
  std::vector<IopolicyPlan> restore = d.RestorePlans();
  ASSERT_EQ(restore.size(), 1u);
  EXPECT_EQ(restore[0].subsystem, "nvme-subsys0");
  EXPECT_EQ(restore[0].from, Iopolicy::kRoundRobin);
  EXPECT_EQ(restore[0].to, Iopolicy::kNuma);  // the first one found
  EXPECT_TRUE(restore[0].restore);
  d.Record(restore[0], DecisionResult::kApplied, At(80));
  EXPECT_TRUE(d.RestorePlans().empty());
}

TEST(IopolicyDeciderTest, BackWhereItStartedNeedsNoRestore) {
  IopolicyDecider d = Decider();
  const model::Scoring qd = Advice(Iopolicy::kQueueDepth);
  const model::Scoring numa_advice = Advice(Iopolicy::kNuma);
  d.Plan(Sub(Iopolicy::kNuma), &qd, At(0));
  std::optional<IopolicyPlan> p = d.Plan(Sub(Iopolicy::kNuma), &qd, At(3));
  d.Record(*p, DecisionResult::kApplied, At(3));
  d.Plan(Sub(Iopolicy::kQueueDepth), &numa_advice, At(10));
  p = d.Plan(Sub(Iopolicy::kQueueDepth), &numa_advice, At(63));
  ASSERT_TRUE(p);
  d.Record(*p, DecisionResult::kApplied, At(63));
  EXPECT_TRUE(d.RestorePlans().empty());
}

TEST(IopolicyDeciderTest, FiguresNameEachHeadsPaths) {
  model::Topology t;
  t.heads.push_back({"nvme0n1", "nvme-subsys0", 1, std::nullopt});
  model::Path p0, p1;
  p0.name = "nvme0c0n1";
  p0.head = "nvme0n1";
  p1.name = "nvme0c1n1";
  p1.head = "nvme0n1";
  t.paths = {p0, p1};
  model::Scoring sc;
  sc.heads["nvme0n1"].latency_imbalance_ratio = 25.3125;
  sc.paths["nvme0c0n1"].latency_ewma_seconds[0] = 0.0312;
  sc.paths["nvme0c0n1"].health = model::PathHealth::kDegraded;
  sc.paths["nvme0c1n1"];
  EXPECT_EQ(Figures(t, sc, "nvme-subsys0"),
            "nvme0n1: imbalance 25.31, nvme0c0n1 31.20 ms degraded, "
            "nvme0c1n1 no read EWMA");
  EXPECT_EQ(Figures(t, sc, "nvme-subsys1"), "");
}

}  // namespace
}  // namespace pathwise::control

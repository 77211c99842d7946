// SPDX-License-Identifier: Apache-2.0
#include "scoring/scoring.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace pathwise::scoring {
namespace {

constexpr int kRead = static_cast<int>(model::OpGroup::kRead);
constexpr int kWrite = static_cast<int>(model::OpGroup::kWrite);

// A window where `path` completed `count` reads of `lat_ns` each.
PathWindow Reads(const std::string& path, uint64_t count, uint64_t lat_ns,
                 bool usable = true) {
  PathWindow w;
  w.path = path;
  w.ops[kRead] = {count, count * lat_ns};
  w.usable = usable;
  return w;
}

TEST(EwmaTest, StepMatchesHandComputedValues) {
  // (1000 * 7 + 2000) >> 3 = 9000 >> 3 = 1125
  EXPECT_EQ(EwmaStep(1000, 2000, 3), 1125u);
  // (100 * 7 + 0) >> 3 = 87 (integer shift truncates)
  EXPECT_EQ(EwmaStep(100, 0, 3), 87u);
  // shift 1: (10 * 1 + 20) >> 1 = 15
  EXPECT_EQ(EwmaStep(10, 20, 1), 15u);
  // shift 0: the new sample replaces the old one
  EXPECT_EQ(EwmaStep(10, 20, 0), 20u);
  // No overflow for large values: (2^62 * 7 + 2^62) >> 3 = 2^62
  EXPECT_EQ(EwmaStep(uint64_t{1} << 62, uint64_t{1} << 62, 3),
            uint64_t{1} << 62);
}

TEST(EwmaTest, FirstSampleInitialisesAndEmptyWindowAges) {
  HeadScorer h;
  h.Update({Reads("a", 4, 1000)});  // window mean 1000 initialises
  ASSERT_TRUE(h.Find("a")->ewma_ns[kRead].has_value());
  EXPECT_EQ(*h.Find("a")->ewma_ns[kRead], 1000u);
  EXPECT_EQ(*h.Find("a")->age_windows[kRead], 0u);
  EXPECT_FALSE(h.Find("a")->ewma_ns[kWrite].has_value());

  h.Update({Reads("a", 2, 2000)});  // (1000*7 + 2000) >> 3
  EXPECT_EQ(*h.Find("a")->ewma_ns[kRead], 1125u);

  h.Update({Reads("a", 0, 0)});  // no samples: unchanged, one window older
  EXPECT_EQ(*h.Find("a")->ewma_ns[kRead], 1125u);
  EXPECT_EQ(*h.Find("a")->age_windows[kRead], 1u);
  EXPECT_EQ(*h.Find("a")->sample_age_windows, 1u);
  h.Update({Reads("a", 0, 0)});
  EXPECT_EQ(*h.Find("a")->sample_age_windows, 2u);
}

TEST(WeightTest, ProportionalToScore) {
  // scores 1e9/1e6 = 1000 and 1e9/3e6 = 333.3; 1000*64/1333.3 = 48,
  // 333.3*64/1333.3 = 16.
  EXPECT_EQ(ComputeWeights({1000000, 3000000}, {true, true}),
            (std::vector<uint32_t>{48, 16}));
  // Equal paths share 64.
  EXPECT_EQ(ComputeWeights({500000, 500000}, {true, true}),
            (std::vector<uint32_t>{32, 32}));
}

TEST(WeightTest, MinimumOneForUsableZeroForUnusable) {
  // 100 us vs 30 ms: scores 10000 and 33.3; 10000*64/10033.3 = 63.8 -> 63;
  // 33.3*64/10033.3 = 0.21 -> 0 -> raised to the minimum 1.
  EXPECT_EQ(ComputeWeights({100000, 30000000}, {true, true}),
            (std::vector<uint32_t>{63, 1}));
  // An unusable path gets 0 and is left out of the sum.
  EXPECT_EQ(ComputeWeights({1000000, 1000000, 1000}, {true, true, false}),
            (std::vector<uint32_t>{32, 32, 0}));
  EXPECT_EQ(ComputeWeights({1000, 1000}, {false, false}),
            (std::vector<uint32_t>{0, 0}));
}

TEST(WeightTest, NoEvidenceSharesEquallyAndUnknownIsOptimistic) {
  EXPECT_EQ(ComputeWeights({std::nullopt, std::nullopt, std::nullopt},
                           {true, true, true}),
            (std::vector<uint32_t>{21, 21, 21}));
  // The unmeasured path is scored like the best known one.
  EXPECT_EQ(
      ComputeWeights({1000000, std::nullopt, 3000000}, {true, true, true}),
      (std::vector<uint32_t>{27, 27, 9}));
}

TEST(HeadScorerTest, WeightsScoreAndImbalance) {
  HeadScorer h;
  h.Update({Reads("a", 10, 1000000), Reads("b", 10, 3000000)});
  EXPECT_EQ(h.Find("a")->weight[kRead], 48u);
  EXPECT_EQ(h.Find("b")->weight[kRead], 16u);
  EXPECT_DOUBLE_EQ(*h.Find("a")->score[kRead], 100.0);
  EXPECT_NEAR(*h.Find("b")->score[kRead], 33.333, 0.001);
  // No writes: no write weight evidence, equal share.
  EXPECT_EQ(h.Find("a")->weight[kWrite], 32u);
  EXPECT_FALSE(h.Find("a")->score[kWrite].has_value());
  const HeadSummary s = h.Summary();
  EXPECT_DOUBLE_EQ(*s.imbalance[kRead], 3.0);
  EXPECT_DOUBLE_EQ(*s.imbalance_ratio, 3.0);
  EXPECT_FALSE(s.imbalance[kWrite].has_value());
  EXPECT_EQ(s.usable_paths, 2);
}

TEST(HeadScorerTest, VanishedPathsAreForgotten) {
  HeadScorer h;
  h.Update({Reads("a", 1, 1000), Reads("b", 1, 1000)});
  h.Update({Reads("b", 1, 1000)});
  EXPECT_EQ(h.Find("a"), nullptr);
  ASSERT_EQ(h.paths().size(), 1u);
  EXPECT_EQ(h.Find("b")->weight[kRead], 64u);
}

// Health tests use shift 0 (EWMA = the window mean) to isolate the state
// machine from the smoothing.
Config Direct() {
  Config c;
  c.ewma_shift = 0;
  return c;
}

model::PathHealth Step(HeadScorer& h, uint64_t a_ns, uint64_t b_ns,
                       bool b_usable = true, uint64_t b_errors = 0) {
  PathWindow b = Reads("b", b_ns ? 10 : 0, b_ns, b_usable);
  b.errors = b_errors;
  h.Update({Reads("a", 10, a_ns), b});
  return h.Find("b")->health;
}

TEST(HealthTest, DegradedAfterTwoWindowsOverRatio) {
  HeadScorer h(Direct());
  EXPECT_EQ(Step(h, 1000, 1000), model::PathHealth::kHealthy);
  EXPECT_EQ(Step(h, 1000, 2999), model::PathHealth::kHealthy);  // under 3x
  EXPECT_EQ(Step(h, 1000, 3000),
            model::PathHealth::kHealthy);  // 1st window at 3x
  EXPECT_EQ(Step(h, 1000, 3000), model::PathHealth::kDegraded);
  EXPECT_EQ(h.Find("a")->health, model::PathHealth::kHealthy);
  EXPECT_EQ(h.Summary()
                .paths_by_state[static_cast<int>(model::PathHealth::kDegraded)],
            1);
}

TEST(HealthTest, RecoveryNeedsFiveCleanWindows) {
  HeadScorer h(Direct());
  Step(h, 1000, 5000);
  ASSERT_EQ(Step(h, 1000, 5000), model::PathHealth::kDegraded);
  for (int i = 1; i <= 4; ++i) {
    EXPECT_EQ(Step(h, 1000, 1000), model::PathHealth::kDegraded)
        << "clean window " << i;
  }
  EXPECT_EQ(Step(h, 1000, 1000), model::PathHealth::kHealthy);
}

TEST(HealthTest, NoFlappingOnAlternatingWindows) {
  HeadScorer h(Direct());
  // Alternating from healthy: never two bad windows in a row, never degraded.
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(Step(h, 1000, i % 2 ? 5000 : 1000), model::PathHealth::kHealthy);
  }
  // Once degraded, alternating windows never give five clean in a row.
  Step(h, 1000, 5000);
  ASSERT_EQ(Step(h, 1000, 5000), model::PathHealth::kDegraded);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(Step(h, 1000, i % 2 ? 5000 : 1000), model::PathHealth::kDegraded)
        << i;
  }
}

TEST(HealthTest, ErrorsDegradeAtOnce) {
  HeadScorer h(Direct());
  EXPECT_EQ(Step(h, 1000, 1000, true, /*b_errors=*/1),
            model::PathHealth::kDegraded);
  PathWindow b = Reads("b", 10, 1000);
  b.failovers = 2;
  h.Update({Reads("a", 10, 1000), b});
  EXPECT_EQ(h.Find("b")->health, model::PathHealth::kDegraded);
  EXPECT_EQ(h.Find("b")->clean_streak, 0);
}

TEST(HealthTest, UnusableIsFailedWithWeightZeroAndRecoversSlowly) {
  HeadScorer h(Direct());
  Step(h, 1000, 1000);
  EXPECT_EQ(Step(h, 1000, 1000, /*b_usable=*/false),
            model::PathHealth::kFailed);
  EXPECT_EQ(h.Find("b")->weight[kRead], 0u);
  EXPECT_EQ(h.Find("a")->weight[kRead], 64u);
  EXPECT_EQ(h.Summary().usable_paths, 1);
  for (int i = 1; i <= 4; ++i) {
    EXPECT_EQ(Step(h, 1000, 1000), model::PathHealth::kDegraded) << i;
    EXPECT_EQ(h.Find("b")->weight[kRead], 32u);  // usable: gets weight
  }
  EXPECT_EQ(Step(h, 1000, 1000), model::PathHealth::kHealthy);
}

TEST(HealthTest, IdleAfterIdleWindowsWithoutSamples) {
  Config c = Direct();
  c.idle_windows = 3;
  HeadScorer h(c);
  Step(h, 1000, 1000);
  EXPECT_EQ(Step(h, 1000, 0), model::PathHealth::kHealthy);  // age 1
  EXPECT_EQ(Step(h, 1000, 0), model::PathHealth::kHealthy);  // age 2
  EXPECT_EQ(Step(h, 1000, 0), model::PathHealth::kIdle);     // age 3
  EXPECT_EQ(Step(h, 1000, 1000), model::PathHealth::kHealthy);
  // Never sampled: idle once idle_windows windows have passed.
  HeadScorer fresh(c);
  for (int i = 0; i < 2; ++i) fresh.Update({Reads("x", 0, 0)});
  EXPECT_EQ(fresh.Find("x")->health, model::PathHealth::kHealthy);
  fresh.Update({Reads("x", 0, 0)});
  EXPECT_EQ(fresh.Find("x")->health, model::PathHealth::kIdle);
}

TEST(HealthTest, SmoothedEwmaDegradesWithinTwoWindowsOfAThirtyMsDelay) {
  // With the default shift 3, a path going from 0.5 ms to 30.5 ms is over 3x
  // after one window ((500*7 + 30500) >> 3 = 4250 us > 1500 us), even
  // without step detection.
  Config plain;
  plain.reseed_ratio = 0;
  HeadScorer h(plain);
  h.Update({Reads("a", 100, 500000), Reads("b", 100, 500000)});
  h.Update({Reads("a", 100, 500000), Reads("b", 100, 30500000)});
  EXPECT_EQ(*h.Find("b")->ewma_ns[kRead], 4250000u);
  EXPECT_EQ(h.Find("b")->health, model::PathHealth::kHealthy);
  h.Update({Reads("a", 100, 500000), Reads("b", 100, 30500000)});
  EXPECT_EQ(h.Find("b")->health, model::PathHealth::kDegraded);
  EXPECT_LE(h.Find("b")->weight[kRead], 6u);
  EXPECT_GE(h.Find("a")->weight[kRead], 58u);
}

TEST(IsUsableTest, AnaAndControllerState) {
  using A = model::AnaState;
  using C = model::ControllerState;
  EXPECT_TRUE(IsUsable(A::kOptimized, C::kLive));
  EXPECT_TRUE(IsUsable(A::kNonOptimized, C::kLive));
  EXPECT_TRUE(IsUsable(A::kUnknown, C::kUnknown));
  EXPECT_FALSE(IsUsable(A::kInaccessible, C::kLive));
  EXPECT_FALSE(IsUsable(A::kPersistentLoss, C::kLive));
  EXPECT_FALSE(IsUsable(A::kChange, C::kLive));
  EXPECT_FALSE(IsUsable(A::kOptimized, C::kConnecting));
  EXPECT_FALSE(IsUsable(A::kOptimized, C::kResetting));
  EXPECT_FALSE(IsUsable(A::kOptimized, C::kDeletingNoIo));
}

constexpr model::Iopolicy kNuma = model::Iopolicy::kNuma;
constexpr model::Iopolicy kRoundRobin = model::Iopolicy::kRoundRobin;
constexpr model::Iopolicy kQueueDepth = model::Iopolicy::kQueueDepth;

Advice AdviseFor(const HeadScorer& h, model::Iopolicy current = kNuma,
                 bool qd = true) {
  AdvisorInput in;
  in.current_iopolicy = current;
  in.kernel_has_queue_depth = qd;
  in.heads = {&h};
  return Advise(in);
}

TEST(AdvisorTest, SymmetricPathsRoundRobin) {
  HeadScorer h;
  h.Update({Reads("a", 10, 1000000), Reads("b", 10, 1200000)});
  EXPECT_EQ(AdviseFor(h).iopolicy, kRoundRobin);
}

TEST(AdvisorTest, SymmetricPathsOnSeveralNodesNuma) {
  HeadScorer h;
  PathWindow a = Reads("a", 10, 1000000), b = Reads("b", 10, 1000000);
  a.numa_node = 0;
  b.numa_node = 1;
  h.Update({a, b});
  EXPECT_EQ(AdviseFor(h, kRoundRobin).iopolicy, kNuma);
}

TEST(AdvisorTest, AsymmetricPathsQueueDepthWhereTheKernelHasIt) {
  HeadScorer h;
  h.Update({Reads("a", 10, 1000000), Reads("b", 10, 1500000)});  // 1.5x
  EXPECT_EQ(AdviseFor(h).iopolicy, kQueueDepth);
  EXPECT_EQ(AdviseFor(h, kNuma, /*qd=*/false).iopolicy, kRoundRobin);
}

TEST(AdvisorTest, DegradedPathIsAsymmetric) {
  HeadScorer h(Direct());
  Step(h, 1000, 1000, true, /*b_errors=*/1);  // degraded, latencies equal
  const Advice a = AdviseFor(h);
  EXPECT_EQ(a.iopolicy, kQueueDepth);
  EXPECT_NE(a.reason.find("degraded"), std::string::npos);
}

TEST(AdvisorTest, NothingToBalanceKeepsTheCurrentPolicy) {
  HeadScorer one;
  one.Update({Reads("a", 10, 1000)});
  EXPECT_EQ(AdviseFor(one, kRoundRobin).iopolicy, kRoundRobin);
  EXPECT_EQ(AdviseFor(one, model::Iopolicy::kUnknown).iopolicy, kNuma);
  HeadScorer failed;  // the only sibling failed: one usable path
  failed.Update({Reads("a", 10, 1000), Reads("b", 10, 9000, false)});
  EXPECT_EQ(AdviseFor(failed, kQueueDepth).iopolicy, kQueueDepth);
  HeadScorer quiet;  // no evidence yet
  quiet.Update({Reads("a", 0, 0), Reads("b", 0, 0)});
  EXPECT_EQ(AdviseFor(quiet, kQueueDepth).iopolicy, kQueueDepth);
}

// Feeds `state` one window and returns its EWMA.
uint64_t Feed(EwmaState& state, uint64_t mean, uint64_t count,
              const Config& c = {}) {
  UpdateEwma(state, mean, count, c);
  return state.value.value_or(0);
}

EwmaState At(uint64_t ewma) { return EwmaState{.value = ewma}; }

TEST(ReseedTest, StepReinitialisesTheEwmaEitherWay) {
  Config c;  // reseed_ratio 3, reseed_min_samples 16
  EwmaState s;
  EXPECT_EQ(Feed(s, 700, 1, c), 700u);  // the first sample
  // Under 3x either way: the plain step.
  s = At(1000);
  EXPECT_EQ(Feed(s, 2999, 100, c), EwmaStep(1000, 2999, 3));
  s = At(3000);
  EXPECT_EQ(Feed(s, 1001, 100, c), EwmaStep(3000, 1001, 3));
  // 3x or more up, over enough I/Os: the window mean, at once.
  s = At(1000);
  EXPECT_EQ(Feed(s, 3000, 16, c), 3000u);
  // 3x or more down: the plain step until the next window confirms it.
  s = At(3000);
  EXPECT_EQ(Feed(s, 1000, 16, c), EwmaStep(3000, 1000, 3));
  EXPECT_EQ(Feed(s, 1000, 16, c), 1000u);
  // Too few I/Os to call it a step.
  s = At(1000);
  EXPECT_EQ(Feed(s, 3000, 15, c), EwmaStep(1000, 3000, 3));
  // Off: the kernel proposal's EWMA, even for a 30x window and the next.
  c.reseed_ratio = 0;
  s = At(1000);
  EXPECT_EQ(Feed(s, 30000, 1000, c), EwmaStep(1000, 30000, 3));
  EXPECT_EQ(Feed(s, 1000, 1000, c),
            EwmaStep(EwmaStep(1000, 30000, 3), 1000, 3));
}

TEST(ReseedTest, ANextWindowThatConfirmsTheStepSettlesOnIt) {
  // The delay began mid-window: the step window's mean is a mix (4 ms
  // against 1 ms before); the next, whole window (32 ms) is the new regime,
  // not a small move from 4 ms (the plain EWMA would take ~10 windows).
  EwmaState s = At(1000000);
  EXPECT_EQ(Feed(s, 4000000, 100), 4000000u);
  EXPECT_EQ(Feed(s, 32000000, 100), 32000000u);
  EXPECT_EQ(Feed(s, 32000000, 100), 32000000u);  // steady: plain steps
  // Down: the mixed window is a plain step, the whole one settles.
  EXPECT_EQ(Feed(s, 9000000, 100), EwmaStep(32000000, 9000000, 3));
  EXPECT_EQ(Feed(s, 1000000, 100), 1000000u);
  // Confirmation is against the EWMA before the step: 2.9x of it is not a
  // step (2.9 ms after 1 ms, then 3 ms after the 9 ms window of a step).
  s = At(1000000);
  EXPECT_EQ(Feed(s, 9000000, 100), 9000000u);
  const uint64_t plain = EwmaStep(EwmaStep(1000000, 9000000, 3), 2900000, 3);
  EXPECT_EQ(Feed(s, 2900000, 100), plain);
}

TEST(ReseedTest, AStepTheNextWindowDoesNotConfirmWasNoise) {
  // One slow window (a GC pause, one retransmission): the EWMA jumps for
  // that window, then continues as the plain EWMA over both windows.
  EwmaState s = At(500000);
  EXPECT_EQ(Feed(s, 5000000, 100), 5000000u);
  EXPECT_EQ(Feed(s, 500000, 100),
            EwmaStep(EwmaStep(500000, 5000000, 3), 500000, 3));
  // A confirming window needs enough I/Os too.
  s = At(500000);
  Feed(s, 5000000, 100);
  EXPECT_EQ(Feed(s, 5000000, 15),
            EwmaStep(EwmaStep(500000, 5000000, 3), 5000000, 3));
  // A window without samples does not decide the step: the next one does.
  HeadScorer h;
  h.Update({Reads("a", 100, 500000), Reads("b", 100, 500000)});
  h.Update({Reads("a", 100, 500000), Reads("b", 100, 5000000)});
  h.Update({Reads("a", 100, 500000), Reads("b", 0, 0)});
  EXPECT_EQ(h.Find("b")->ewma_state[kRead].step, 1);
  h.Update({Reads("a", 100, 500000), Reads("b", 100, 5000000)});
  EXPECT_EQ(*h.Find("b")->ewma_ns[kRead], 5000000u);
  EXPECT_EQ(h.Find("b")->ewma_state[kRead].step, 0);
}

TEST(ReseedTest, ALossyPathDoesNotWinBackWeightAfterOneCleanWindow) {
  // Windows alternating clean (0.5 ms) and with a retransmission (20 ms
  // mean): the weights must not swing to favour the lossy path after each
  // clean window (the plain EWMA carries the retransmissions).
  HeadScorer h;
  for (int i = 0; i < 3; ++i) {
    h.Update({Reads("a", 100, 500000), Reads("b", 100, 500000)});
  }
  for (int i = 0; i < 20; ++i) {
    h.Update(
        {Reads("a", 100, 500000), Reads("b", 100, i % 2 ? 500000 : 20000000)});
    if (i >= 4) {
      EXPECT_LE(h.Find("b")->weight[kRead], 16u) << i;
      EXPECT_EQ(h.Find("b")->health, model::PathHealth::kDegraded) << i;
    }
  }
}

TEST(ReseedTest, ThirtyMsDelayAndClearSeenWithinSeconds) {
  // The testbed's story with 1 s windows: 0.5 ms paths, +30 ms on b, then
  // the delay cleared. Defaults (shift 3, reseed 3x).
  HeadScorer h;
  for (int i = 0; i < 3; ++i) {
    h.Update({Reads("a", 100, 500000), Reads("b", 100, 500000)});
  }
  h.Update({Reads("a", 100, 500000), Reads("b", 100, 30500000)});
  EXPECT_EQ(*h.Find("b")->ewma_ns[kRead], 30500000u);  // reseeded
  EXPECT_LE(h.Find("b")->weight[kRead], 6u);
  EXPECT_GE(h.Find("a")->weight[kRead], 58u);
  EXPECT_EQ(h.Find("b")->health,
            model::PathHealth::kHealthy);  // one window over
  h.Update({Reads("a", 100, 500000), Reads("b", 100, 30500000)});
  EXPECT_EQ(h.Find("b")->health, model::PathHealth::kDegraded);
  // Cleared: the second clean window confirms the step down, reseeds and
  // rebalances; five clean windows make it healthy (without the reseed:
  // ~20 windows for the EWMA to come under 3x, then five more).
  h.Update({Reads("a", 100, 500000), Reads("b", 100, 520000)});
  EXPECT_EQ(*h.Find("b")->ewma_ns[kRead], EwmaStep(30500000, 520000, 3));
  EXPECT_LE(h.Find("b")->weight[kRead], 6u);
  h.Update({Reads("a", 100, 500000), Reads("b", 100, 520000)});
  EXPECT_EQ(*h.Find("b")->ewma_ns[kRead], 520000u);
  EXPECT_GE(h.Find("b")->weight[kRead], 28u);
  EXPECT_EQ(h.Find("b")->health, model::PathHealth::kDegraded);
  for (int i = 2; i <= 4; ++i) {
    h.Update({Reads("a", 100, 500000), Reads("b", 100, 520000)});
    EXPECT_EQ(h.Find("b")->health, model::PathHealth::kDegraded) << i;
  }
  h.Update({Reads("a", 100, 500000), Reads("b", 100, 520000)});
  EXPECT_EQ(h.Find("b")->health, model::PathHealth::kHealthy);
}

TEST(ReseedTest, OneSlowWindowDoesNotDegrade) {
  HeadScorer h;
  h.Update({Reads("a", 100, 500000), Reads("b", 100, 500000)});
  h.Update({Reads("a", 100, 500000), Reads("b", 100, 5000000)});  // spike
  h.Update({Reads("a", 100, 500000), Reads("b", 100, 500000)});
  // Not confirmed: the plain EWMA over both windows, under 3x.
  EXPECT_EQ(*h.Find("b")->ewma_ns[kRead],
            EwmaStep(EwmaStep(500000, 5000000, 3), 500000, 3));
  EXPECT_EQ(h.Find("b")->health, model::PathHealth::kHealthy);
  for (int i = 0; i < 10; ++i) {
    h.Update({Reads("a", 100, 500000), Reads("b", 100, 500000)});
    EXPECT_EQ(h.Find("b")->health, model::PathHealth::kHealthy) << i;
  }
}

}  // namespace
}  // namespace pathwise::scoring

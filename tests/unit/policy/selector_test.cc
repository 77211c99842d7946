// SPDX-License-Identifier: Apache-2.0
// The path selectors in isolation: no simulator, time and completions fed by
// hand.
#include "policy/selector.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "policy/hst_selector.h"
#include "policy/latency_selector.h"
#include "policy/pathwise_selector.h"
#include "policy/policy.h"
#include "tests/unit/policy/selector_fixture.h"

namespace pathwise::policy {
namespace {

TEST(PolicyNames, RoundTripAndFactory) {
  ASSERT_EQ(AllPolicies().size(), static_cast<size_t>(kPolicyCount));
  for (Policy p : AllPolicies()) {
    EXPECT_EQ(PolicyFromName(PolicyName(p)), p);
    std::unique_ptr<Selector> s = MakeSelector(p);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->policy(), p);
  }
  EXPECT_EQ(PolicyName(Policy::kRoundRobin), "round-robin");
  EXPECT_EQ(PolicyName(Policy::kHst), "hst");
  EXPECT_FALSE(PolicyFromName("fastest").has_value());
  // Only the window-based pathwise policy asks for ticks.
  EXPECT_EQ(
      MakeSelector(Policy::kPathwise, {.pathwise = {.window_ns = 2 * kSec}})
          ->tick_interval_ns(),
      2 * kSec);
  EXPECT_EQ(MakeSelector(Policy::kLatency)->tick_interval_ns(), 0);
}

TEST(AnySelector, NoUsablePathReturnsNone) {
  for (Policy p : AllPolicies()) {
    std::unique_ptr<Selector> s = MakeSelector(p);
    EXPECT_EQ(s->Select(Read()), kNoPath) << PolicyName(p) << ", no paths";
    const std::vector<PathInfo> down = {Path(false), Path(false)};
    s->SetPaths(down);
    EXPECT_EQ(s->Select(Read()), kNoPath) << PolicyName(p);
    // And one comes back.
    const std::vector<PathInfo> one = {Path(false), Path(true)};
    s->SetPaths(one);
    EXPECT_EQ(s->Select(Read()), 1) << PolicyName(p);
  }
}

TEST(AnySelector, PrefersOptimizedPaths) {
  // Path 0 is non-optimized: every policy uses the optimized ones while
  // there are any, and falls back to it when there are none.
  const std::vector<PathInfo> paths = {Path(true, -1, false), Path(true),
                                       Path(true)};
  const std::vector<PathInfo> fallback = {Path(true, -1, false), Path(false),
                                          Path(false)};
  for (Policy p : AllPolicies()) {
    std::unique_ptr<Selector> s = MakeSelector(p);
    s->SetPaths(paths);
    for (int k = 0; k < 10; ++k) {
      const int chosen = s->Select(Read());
      EXPECT_TRUE(chosen == 1 || chosen == 2) << PolicyName(p);
      s->OnSubmit(chosen, Read(), 0);
    }
    s->SetPaths(fallback);
    EXPECT_EQ(s->Select(Read()), 0) << PolicyName(p);
  }
}

TEST(RoundRobin, AlternatesAmongUsablePathsAndSkipsUnusable) {
  std::unique_ptr<Selector> s = MakeSelector(Policy::kRoundRobin);
  const std::vector<PathInfo> paths = {Path(), Path(false), Path()};
  s->SetPaths(paths);
  std::vector<int> got;
  for (int k = 0; k < 6; ++k) got.push_back(s->Select(Read()));
  EXPECT_EQ(got, (std::vector<int>{0, 2, 0, 2, 0, 2}));
  // Path 1 comes back: the rotation continues after the last path chosen.
  const std::vector<PathInfo> all = {Path(), Path(), Path()};
  s->SetPaths(all);
  got.clear();
  for (int k = 0; k < 4; ++k) got.push_back(s->Select(Read()));
  EXPECT_EQ(got, (std::vector<int>{0, 1, 2, 0}));
}

TEST(Numa, PicksThePathOnTheSubmittingNodeFirstInListOrder) {
  std::unique_ptr<Selector> s = MakeSelector(Policy::kNuma);
  // Nodes 0, 1, 1, 0.
  const std::vector<PathInfo> paths = {Path(true, 0), Path(true, 1),
                                       Path(true, 1), Path(true, 0)};
  s->SetPaths(paths);
  EXPECT_EQ(s->Select(Read(0, 1)), 1);  // node 1: paths 1 and 2 tie
  EXPECT_EQ(s->Select(Read(0, 0)), 0);  // node 0: paths 0 and 3 tie
  EXPECT_EQ(s->Select(Read(5, 1)), 1);  // any CPU of node 1
  // Cached per node, and load does not move it.
  for (int k = 0; k < 5; ++k) s->OnSubmit(1, Read(0, 1), 0);
  EXPECT_EQ(s->Select(Read(0, 1)), 1);
  // A path change clears the cache: path 1 gone, path 2 is next on node 1.
  const std::vector<PathInfo> without1 = {Path(true, 0), Path(false, 1),
                                          Path(true, 1), Path(true, 0)};
  s->SetPaths(without1);
  EXPECT_EQ(s->Select(Read(0, 1)), 2);
  // No path on node 1 left: the nearest by distance is a remote one, first
  // in list order.
  const std::vector<PathInfo> remote = {Path(false, 0), Path(false, 1),
                                        Path(false, 1), Path(true, 0)};
  s->SetPaths(remote);
  EXPECT_EQ(s->Select(Read(0, 1)), 3);
  // A path of unknown node counts as local.
  const std::vector<PathInfo> unknown = {Path(true, 0), Path(true, -1)};
  s->SetPaths(unknown);
  EXPECT_EQ(s->Select(Read(0, 1)), 1);
}

TEST(QueueDepth, PicksTheLeastInFlight) {
  std::unique_ptr<Selector> s = MakeSelector(Policy::kQueueDepth);
  const std::vector<PathInfo> paths = {Path(), Path(), Path()};
  s->SetPaths(paths);
  EXPECT_EQ(s->Select(Read()), 0);  // all idle: first in list order
  s->OnSubmit(0, Read(), 0);
  s->OnSubmit(0, Read(), 0);
  s->OnSubmit(1, Read(), 0);
  EXPECT_EQ(s->Select(Read()), 2);
  s->OnSubmit(2, Read(), 0);
  s->OnSubmit(2, Read(), 0);
  EXPECT_EQ(s->inflight(0), 2);
  EXPECT_EQ(s->Select(Read()), 1);  // 2, 1, 2
  // Completions (and failures) leave the path.
  s->OnComplete(0, Read(), {.now_ns = 1, .latency_ns = 1});
  s->OnComplete(0, Read(), {.now_ns = 1, .latency_ns = 1, .ok = false});
  EXPECT_EQ(s->inflight(0), 0);
  EXPECT_EQ(s->Select(Read()), 0);
}

TEST(Latency, CreditsFavourTheFasterPathByTheWeightRatio) {
  LatencySelector s({.window_ns = 1 * kSec, .ewma_shift = 3},
                    {.cpus = 2, .start_ns = 0});
  const std::vector<PathInfo> paths = {Path(), Path()};
  s.SetPaths(paths);
  const std::vector<int64_t> latency = {100 * kUs, 200 * kUs};
  // Before any window: equal weights, 32 credits each, spent in list order.
  std::array<int, 2> count = {0, 0};
  int64_t now = 0;
  for (int k = 0; k < 64; ++k, now += kMs) {
    ++count[RoundTrip(s, Read(0), now, latency)];
  }
  EXPECT_EQ(count, (std::array<int, 2>{32, 32}));
  // Feedback: the first completion after 1 s folds the batch into the EWMA.
  while (now < 1 * kSec) RoundTrip(s, Read(0), now += kMs, latency);
  EXPECT_EQ(s.ewma(0, model::OpGroup::kRead, 0), 100 * kUs);
  EXPECT_EQ(s.ewma(0, model::OpGroup::kRead, 1), 200 * kUs);
  // Weights 1e4 and 5e3 per second, x 64 / sum: 42 and 21, twice as much
  // I/O on the faster path.
  count = {0, 0};
  for (int k = 0; k < 63 * 100; ++k, now += kMs) {
    ++count[RoundTrip(s, Read(0), now, latency)];
  }
  EXPECT_NEAR(static_cast<double>(count[0]) / count[1], 2.0, 0.03);
  // Per CPU: CPU 1 has no window yet, so it still splits evenly.
  EXPECT_FALSE(s.ewma(1, model::OpGroup::kRead, 0).has_value());
  count = {0, 0};
  for (int k = 0; k < 64; ++k) ++count[s.Select(Read(1))];
  EXPECT_EQ(count, (std::array<int, 2>{32, 32}));
  // Per op group: writes on CPU 0 have no window either.
  EXPECT_FALSE(s.ewma(0, model::OpGroup::kWrite, 0).has_value());
}

TEST(Latency, FailedCompletionsAreNotLearned) {
  LatencySelector s({.window_ns = 1 * kSec}, {});
  const std::vector<PathInfo> paths = {Path(), Path()};
  s.SetPaths(paths);
  s.OnSubmit(0, Read(), 0);
  s.OnComplete(0, Read(), {.now_ns = 2 * kSec, .latency_ns = 5, .ok = false});
  EXPECT_EQ(s.inflight(0), 0);
  EXPECT_FALSE(s.ewma(0, model::OpGroup::kRead, 0).has_value());
}

TEST(Hst, PicksTheLeastEstimatedServiceTime) {
  HstSelector s({.ewma_shift = 3});
  const std::vector<PathInfo> paths = {Path(), Path()};
  s.SetPaths(paths);
  // No history: every estimate is 0, first in list order.
  EXPECT_EQ(s.Select(Read()), 0);
  s.OnSubmit(0, Read(), 0);
  s.OnComplete(0, Read(), {.now_ns = 500 * kUs, .latency_ns = 500 * kUs});
  s.OnSubmit(1, Read(), 0);
  s.OnComplete(1, Read(), {.now_ns = 100 * kUs, .latency_ns = 100 * kUs});
  EXPECT_EQ(s.ewma(0), static_cast<uint64_t>(500 * kUs));
  EXPECT_EQ(s.ewma(1), static_cast<uint64_t>(100 * kUs));
  EXPECT_EQ(s.Select(Read()), 1);  // 1 x 100 us < 1 x 500 us
  // (in-flight + 1) x EWMA: 5 in flight on path 1 make it 600 us.
  for (int k = 0; k < 5; ++k) s.OnSubmit(1, Read(), 0);
  EXPECT_EQ(s.Select(Read()), 0);
  // Later completions move the EWMA by 1/8 of the difference.
  s.OnComplete(1, Read(), {.now_ns = 1 * kMs, .latency_ns = 900 * kUs});
  EXPECT_EQ(s.ewma(1), static_cast<uint64_t>(200 * kUs));
  // A failed completion teaches nothing.
  s.OnComplete(1, Read(), {.now_ns = 1 * kMs, .latency_ns = 1, .ok = false});
  EXPECT_EQ(s.ewma(1), static_cast<uint64_t>(200 * kUs));
  EXPECT_EQ(s.inflight(1), 3);
}

}  // namespace
}  // namespace pathwise::policy

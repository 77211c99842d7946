// The path selectors in isolation: no simulator, time and completions fed by
// hand.
#include "policy/selector.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <queue>
#include <tuple>
#include <vector>

#include "policy/hst_selector.h"
#include "policy/latency_selector.h"
#include "policy/pathwise_selector.h"
#include "policy/policy.h"

namespace pathwise::policy {
namespace {

constexpr int64_t kUs = 1000;
constexpr int64_t kMs = 1000 * kUs;
constexpr int64_t kSec = 1000 * kMs;

PathInfo Path(bool usable = true, int node = -1, bool optimized = true) {
  return PathInfo{.usable = usable, .optimized = optimized, .numa_node = node};
}

IoRequest Read(int cpu = 0, int node = 0) {
  return IoRequest{.op = model::OpGroup::kRead, .cpu = cpu, .numa_node = node};
}

// Selects, submits and completes one I/O at `now` with the latency of the
// chosen path; returns the path.
int RoundTrip(Selector& s, const IoRequest& io, int64_t now,
              const std::vector<int64_t>& latency) {
  const int p = s.Select(io);
  if (p == kNoPath) return p;
  s.OnSubmit(p, io, now);
  s.OnComplete(p, io, {.now_ns = now + latency[p], .latency_ns = latency[p]});
  return p;
}

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

TEST(Pathwise, FeedsTheScoringLibraryEveryTick) {
  PathwiseSelector s({.window_ns = 1 * kSec, .ewma_shift = 3});
  const std::vector<PathInfo> paths = {Path(), Path(), Path(false)};
  s.SetPaths(paths);
  // Before the first tick the usable paths share the weight equally.
  EXPECT_EQ(s.weight(model::OpGroup::kRead, 0), 32u);
  EXPECT_EQ(s.weight(model::OpGroup::kRead, 1), 32u);
  EXPECT_EQ(s.weight(model::OpGroup::kRead, 2), 0u);
  // Completions on both paths: 100 us on path 0, 200 us on path 1.
  const std::array<int64_t, 2> latency = {100 * kUs, 200 * kUs};
  int64_t now = 0;
  for (int k = 0; k < 50; ++k, now += kMs) {
    for (int p = 0; p < 2; ++p) {
      s.OnSubmit(p, Read(), now);
      s.OnComplete(p, Read(),
                   {.now_ns = now + latency[p], .latency_ns = latency[p]});
    }
  }
  // No tick yet: the scorer has not seen them.
  EXPECT_EQ(s.weight(model::OpGroup::kRead, 0), 32u);
  s.Tick(1 * kSec);
  // The scoring library's weights: 42 and 21 (see Latency above).
  const scoring::PathScore& p0 = s.scorer().paths()[0];
  EXPECT_EQ(p0.ewma_ns[0], 100 * kUs);
  EXPECT_EQ(s.weight(model::OpGroup::kRead, 0), 42u);
  EXPECT_EQ(s.weight(model::OpGroup::kRead, 1), 21u);
  EXPECT_EQ(s.weight(model::OpGroup::kRead, 2), 0u);
  EXPECT_EQ(s.weight(model::OpGroup::kRead, 0), p0.weight[0]);
  // A path event with the same paths keeps what was learned; a new set of
  // paths starts afresh (equal shares).
  const std::vector<PathInfo> same = {Path(), Path(), Path()};
  s.SetPaths(same);
  EXPECT_EQ(s.weight(model::OpGroup::kRead, 0), 42u);
  EXPECT_EQ(s.base(1), static_cast<uint64_t>(200 * kUs));
  // Path 2 became usable: it gets a weight at the next tick.
  EXPECT_EQ(s.weight(model::OpGroup::kRead, 2), 0u);
  const std::vector<PathInfo> two = {Path(), Path()};
  s.SetPaths(two);
  EXPECT_EQ(s.weight(model::OpGroup::kRead, 0), 32u);
  EXPECT_EQ(s.weight(model::OpGroup::kRead, 1), 32u);
  EXPECT_EQ(s.base(1), 0u);
}

// `n` completions on `path`, one every `gap` from `start`, each `latency`
// long (submitted and completed, so the in-flight count is unchanged).
void Complete(PathwiseSelector& s, int path, int n, int64_t start, int64_t gap,
              int64_t latency) {
  for (int k = 0; k < n; ++k) {
    const int64_t now = start + k * gap;
    s.OnSubmit(path, Read(), now - latency);
    s.OnComplete(path, Read(), {.now_ns = now, .latency_ns = latency});
  }
}

TEST(Pathwise, FillsTheFastestPathUpToItsKneeThenTheNext) {
  PathwiseSelector s({.window_ns = 1 * kSec});
  const std::vector<PathInfo> paths = {Path(), Path()};
  s.SetPaths(paths);
  // A path with nothing in flight is probed first, in list order.
  EXPECT_EQ(s.Select(Read()), 0);
  s.OnSubmit(0, Read(), 0);
  EXPECT_EQ(s.Select(Read()), 1);
  s.OnSubmit(1, Read(), 0);
  // No completion yet anywhere: least in-flight, first in list order.
  EXPECT_EQ(s.Select(Read()), 0);
  // Path 1: 2 ms, 10k completions/s (20 in service at its base), so it
  // takes up to 20 x 5/4 + 1 = 26 I/Os. Path 0: 30 ms, 1k/s (30 in
  // service): up to 38.
  Complete(s, 1, 21, 10 * kMs, 100 * kUs, 2 * kMs);
  Complete(s, 0, 31, 10 * kMs, 1 * kMs, 30 * kMs);
  EXPECT_EQ(s.base(1), static_cast<uint64_t>(2 * kMs));
  EXPECT_DOUBLE_EQ(s.rate(1), 10000);
  EXPECT_EQ(s.cap(1), 26);
  EXPECT_EQ(s.base(0), static_cast<uint64_t>(30 * kMs));
  EXPECT_EQ(s.cap(0), 38);
  // Below its cap the faster path takes the I/O, though it has more in
  // flight than the slower one...
  for (int k = 1; k < 25; ++k) s.OnSubmit(1, Read(), 50 * kMs);
  ASSERT_EQ(s.inflight(1), 25);
  EXPECT_EQ(s.Select(Read()), 1);
  // ...and at its cap the next one does.
  s.OnSubmit(1, Read(), 50 * kMs);
  EXPECT_EQ(s.Select(Read()), 0);
  // Every path at its cap: least in-flight.
  for (int k = 1; k < 38; ++k) s.OnSubmit(0, Read(), 50 * kMs);
  ASSERT_EQ(s.inflight(0), 38);
  EXPECT_EQ(s.Select(Read()), 1);
  // Completions of a path past its cap do not move its base: its own
  // queue would hide it.
  Complete(s, 1, 21, 60 * kMs, 100 * kUs, 9 * kMs);
  EXPECT_EQ(s.base(1), static_cast<uint64_t>(2 * kMs));
  // A failed completion teaches nothing but frees its slot.
  s.OnComplete(1, Read(), {.now_ns = 70 * kMs, .latency_ns = 1, .ok = false});
  EXPECT_EQ(s.base(1), static_cast<uint64_t>(2 * kMs));
  EXPECT_EQ(s.inflight(1), 25);
}

// An idle slower path is probed once per kProbeBases of its base, not
// kept busy: with few I/Os outstanding, one on a 6x slower path for its
// whole latency costs the faster path a slot. A probe that finds the path
// faster than the other makes it the one that takes the I/O.
TEST(Pathwise, ProbesAnIdleSlowerPathOncePerFewBases) {
  PathwiseSelector s({.window_ns = 1 * kSec});
  const std::vector<PathInfo> paths = {Path(), Path()};
  s.SetPaths(paths);
  // Path 0: 36 ms, path 1: 6 ms, both lightly loaded (below their caps).
  Complete(s, 0, 3, 100 * kMs, 40 * kMs, 36 * kMs);
  Complete(s, 1, 150, 100 * kMs, 500 * kUs, 6 * kMs);
  ASSERT_EQ(s.base(0), static_cast<uint64_t>(36 * kMs));
  ASSERT_EQ(s.base(1), static_cast<uint64_t>(6 * kMs));
  ASSERT_GT(s.cap(1), 4);
  // Path 0's last I/O went out at 144 ms (180 - 36): idle, but probed
  // again only kProbeBases x 36 ms later; until then path 1 takes every
  // I/O.
  const int64_t last0 = 180 * kMs - 36 * kMs;
  s.OnSubmit(1, Read(), 200 * kMs);  // now = 200 ms
  EXPECT_EQ(s.Select(Read()), 1);
  s.OnSubmit(1, Read(), last0 + PathwiseSelector::kProbeBases * 36 * kMs - 1);
  EXPECT_EQ(s.Select(Read()), 1);
  s.OnSubmit(1, Read(), last0 + PathwiseSelector::kProbeBases * 36 * kMs);
  EXPECT_EQ(s.Select(Read()), 0);  // the probe
  const int64_t probe = last0 + PathwiseSelector::kProbeBases * 36 * kMs;
  s.OnSubmit(0, Read(), probe);
  // One probe at a time: path 0 has it in flight, path 1 takes the rest.
  EXPECT_EQ(s.Select(Read()), 1);
  // The probe comes back in 2 ms: path 0 is now the faster path.
  s.OnComplete(0, Read(), {.now_ns = probe + 2 * kMs, .latency_ns = 2 * kMs});
  EXPECT_EQ(s.base(0), static_cast<uint64_t>(2 * kMs));
  EXPECT_EQ(s.Select(Read()), 0);
}

// A path whose base is over a quarter of a window is probed once a window,
// not once per 4 bases: one very slow completion does not keep a path that
// recovered unprobed for long.
// A latency-bound path with jitter (5 or 9 ms at any load: its mean 7 ms
// is 40 % over its minimum) is not saturated: with 8 I/Os outstanding in a
// closed loop, the 36 ms path gets only its probes. From the minimum
// alone the fast path's cap fell to its in-flight count and every eighth
// I/O spilled to the slow path.
TEST(Pathwise, JitterIsNotSaturation) {
  PathwiseSelector s({.window_ns = 1 * kSec});
  const std::vector<PathInfo> paths = {Path(), Path()};
  s.SetPaths(paths);
  // (completion time, path, latency), earliest first.
  using Io = std::tuple<int64_t, int, int64_t>;
  std::priority_queue<Io, std::vector<Io>, std::greater<>> out;
  int64_t now = 0;
  int next_tick = 1;
  uint64_t fast_lat = 0;
  std::array<int, 2> sent{};
  const auto submit = [&] {
    const int p = s.Select(Read());
    ASSERT_NE(p, kNoPath);
    s.OnSubmit(p, Read(), now);
    const int64_t lat = p == 0 ? 36 * kMs : (++fast_lat % 2 ? 5 : 9) * kMs;
    out.emplace(now + lat, p, lat);
    if (now >= 2 * kSec) ++sent[p];
  };
  for (int k = 0; k < 8; ++k) submit();
  while (now < 12 * kSec) {
    const auto [at, p, lat] = out.top();
    out.pop();
    while (next_tick * kSec <= at) s.Tick(next_tick++ * kSec);
    now = at;
    s.OnComplete(p, Read(), {.now_ns = now, .latency_ns = lat});
    submit();
  }
  ASSERT_EQ(s.base(1), static_cast<uint64_t>(5 * kMs));
  EXPECT_GT(s.cap(1), 8);
  // 10 s: ~11k I/Os on the fast path; the slow one's probes, one per
  // kProbeBases x 36 ms (+ its own 36 ms).
  EXPECT_GT(sent[1], 10000);
  EXPECT_LE(sent[0],
            10 * kSec / ((PathwiseSelector::kProbeBases + 1) * 36 * kMs) + 1);
}

TEST(Pathwise, ProbesAnIdlePathAtLeastOncePerWindow) {
  PathwiseSelector s({.window_ns = 1 * kSec});
  const std::vector<PathInfo> paths = {Path(), Path()};
  s.SetPaths(paths);
  Complete(s, 0, 1, 700 * kMs, 1, 600 * kMs);  // sent at 100 ms
  Complete(s, 1, 150, 100 * kMs, 500 * kUs, 6 * kMs);
  ASSERT_EQ(s.base(0), static_cast<uint64_t>(600 * kMs));
  ASSERT_GT(s.cap(1), 4);
  s.OnSubmit(1, Read(), 1100 * kMs - 1);
  EXPECT_EQ(s.Select(Read()), 1);
  s.OnSubmit(1, Read(), 1100 * kMs);  // a window after path 0's last I/O
  EXPECT_EQ(s.Select(Read()), 0);
}

TEST(Pathwise, BaseFollowsAPathThatGotSlowerAfterItsWindows) {
  PathwiseSelector s({.window_ns = 1 * kSec});
  const std::vector<PathInfo> paths = {Path(), Path()};
  s.SetPaths(paths);
  Complete(s, 0, 5, 0, 1 * kMs, 2 * kMs);
  EXPECT_EQ(s.base(0), static_cast<uint64_t>(2 * kMs));
  s.Tick(1 * kSec);
  // Lightly loaded but 30 ms from now on: the 2 ms stays the base for
  // kBaseWindows ticks in all, then the lowest latency since is the base.
  for (int t = 2; t <= PathwiseSelector::kBaseWindows + 1; ++t) {
    Complete(s, 0, 1, (t - 1) * kSec + 10 * kMs, 1, 30 * kMs);
    EXPECT_EQ(s.base(0), static_cast<uint64_t>(2 * kMs)) << t;
    s.Tick(t * kSec);
  }
  EXPECT_EQ(s.base(0), static_cast<uint64_t>(30 * kMs));
}

TEST(Pathwise, DrainsAPathWhoseRateFellPastItsCapAndProbesItsBase) {
  PathwiseSelector s({.window_ns = 1 * kSec});
  const std::vector<PathInfo> paths = {Path(), Path()};
  s.SetPaths(paths);
  // Both paths: 2 ms, 10k completions/s, cap 26.
  Complete(s, 1, 21, 10 * kMs, 100 * kUs, 2 * kMs);
  Complete(s, 0, 21, 10 * kMs, 100 * kUs, 2 * kMs);
  ASSERT_EQ(s.cap(0), 26);
  s.Tick(1 * kSec);
  // Both past their cap from now on. Path 1 completes nothing (its rate
  // stays); path 0 completes 4 I/Os a tick at 30 ms (its rate falls).
  for (int k = 0; k < 30; ++k) {
    s.OnSubmit(0, Read(), 1 * kSec);
    s.OnSubmit(1, Read(), 1 * kSec);
  }
  for (int t = 2; t <= PathwiseSelector::kBaseWindows + 1; ++t) {
    EXPECT_FALSE(s.draining(0)) << t;
    Complete(s, 0, 4, (t - 1) * kSec + 100 * kMs, 250 * kMs, 30 * kMs);
    s.Tick(t * kSec);
  }
  // kBaseWindows ticks without a completion below its cap: path 0, whose
  // rate fell, is drained; path 1, whose rate did not, is not.
  EXPECT_EQ(s.base(0), static_cast<uint64_t>(2 * kMs));
  EXPECT_TRUE(s.draining(0));
  EXPECT_FALSE(s.draining(1));
  // No new I/O for it until it is empty...
  EXPECT_EQ(s.Select(Read()), 1);
  for (int k = 0; k < 30; ++k) {
    s.OnComplete(0, Read(), {.now_ns = 12 * kSec, .latency_ns = 30 * kMs});
    if (k < 29) EXPECT_EQ(s.Select(Read()), 1);
  }
  // ...then one probe, whose latency is its base.
  EXPECT_EQ(s.Select(Read()), 0);
  s.OnSubmit(0, Read(), 12 * kSec);
  EXPECT_EQ(s.Select(Read()), 1);
  s.OnComplete(0, Read(),
               {.now_ns = 12 * kSec + 31 * kMs, .latency_ns = 31 * kMs});
  EXPECT_FALSE(s.draining(0));
  EXPECT_EQ(s.base(0), static_cast<uint64_t>(31 * kMs));
}

TEST(Pathwise, FailuresCountAsFailoversInTheWindow) {
  PathwiseSelector s({.window_ns = 1 * kSec});
  const std::vector<PathInfo> paths = {Path(), Path()};
  s.SetPaths(paths);
  s.OnSubmit(0, Read(), 0);
  s.OnComplete(0, Read(), {.now_ns = 10, .latency_ns = 10, .ok = false});
  EXPECT_EQ(s.inflight(0), 0);
  s.Tick(1 * kSec);
  EXPECT_EQ(s.scorer().paths()[0].health, model::PathHealth::kDegraded);
  EXPECT_EQ(s.scorer().paths()[1].health, model::PathHealth::kHealthy);
  EXPECT_FALSE(s.scorer().paths()[0].ewma_ns[0].has_value());
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

// SPDX-License-Identifier: Apache-2.0
// The pathwise selector's probes of idle paths: their pace, their budget
// and what a probe that finds a path faster changes. Time and completions
// fed by hand, as in pathwise_selector_test.cc.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

#include "policy/pathwise_selector.h"
#include "tests/unit/policy/selector_fixture.h"

namespace pathwise::policy {
namespace {

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
  // again only kProbeBases x 36 ms later; until then path 1, which holds
  // four I/Os and keeps completing them in 6 ms, takes every I/O.
  const auto busy1 = [&s](int64_t now) {
    s.OnComplete(1, Read(), {.now_ns = now, .latency_ns = 6 * kMs});
    s.OnSubmit(1, Read(), now);
  };
  const int64_t last0 = 180 * kMs - 36 * kMs;
  for (int k = 0; k < 4; ++k) s.OnSubmit(1, Read(), 200 * kMs);
  EXPECT_EQ(s.Select(Read()), 1);
  busy1(last0 + PathwiseSelector::kProbeBases * 36 * kMs - 1);
  EXPECT_EQ(s.Select(Read()), 1);
  busy1(last0 + PathwiseSelector::kProbeBases * 36 * kMs);
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

// A slow path that got faster is used from its first probe's completion:
// its levels' means, from many 36 ms completions, would take as many more
// to come down, and it gets only probes meanwhile.
TEST(Pathwise, APathThatGotFasterIsUsedFromItsNextProbe) {
  PathwiseSelector s({.window_ns = 1 * kSec});
  const std::vector<PathInfo> paths = {Path(), Path()};
  s.SetPaths(paths);
  // 20 s of 36 ms: ~30 probes, enough for its least level's mean.
  const std::array<int, 2> sent =
      ClosedLoop(s, 8, 21 * kSec, 22 * kSec, [](int p, int64_t now) {
        if (p == 1) return 5 * kMs;
        return now < 20 * kSec ? 36 * kMs : 2 * kMs;
      });
  // Its probe goes out by 20.65 s and is back 2 ms later; from 21 s on,
  // path 0 (2 ms) takes most of the I/O.
  EXPECT_EQ(s.base(0), static_cast<uint64_t>(2 * kMs));
  EXPECT_GT(sent[0], 3 * sent[1]) << sent[0] << " vs " << sent[1];
}

// A path whose unloaded latency is over 1/kProbeBases of a window is
// probed once a window, not once per kProbeBases of it: one very slow
// completion does not keep a path that recovered unprobed for long.
TEST(Pathwise, ProbesAnIdlePathAtLeastOncePerWindow) {
  PathwiseSelector s({.window_ns = 1 * kSec});
  const std::vector<PathInfo> paths = {Path(), Path()};
  s.SetPaths(paths);
  Complete(s, 0, 1, 700 * kMs, 1, 600 * kMs);          // sent at 100 ms
  Complete(s, 1, 750, 100 * kMs, 100 * kUs, 6 * kMs);  // 60 in flight
  ASSERT_EQ(s.base(0), static_cast<uint64_t>(600 * kMs));
  ASSERT_GT(s.cap(1), 40);
  // 40 I/Os in flight on path 1 with the one being placed: a 600 ms probe
  // a window holds 1/66 of them, within the probes' budget (1/64).
  for (int k = 0; k < 38; ++k) s.OnSubmit(1, Read(), 1100 * kMs - 1);
  EXPECT_EQ(s.Select(Read()), 1);
  s.OnSubmit(1, Read(), 1100 * kMs);  // a window after path 0's last I/O
  EXPECT_EQ(s.Select(Read()), 0);
}

// With few I/Os outstanding a slow path's probe would hold a large share of
// them: it waits until its probes fit the budget (1 / kProbeBudgetDen of the
// I/Os in flight), at most kBaseWindows windows.
TEST(Pathwise, ProbesASlowPathOnlyAsOftenAsTheBudgetAllows) {
  PathwiseSelector s({.window_ns = 1 * kSec});
  const std::vector<PathInfo> paths = {Path(), Path()};
  s.SetPaths(paths);
  Complete(s, 0, 1, 700 * kMs, 1, 600 * kMs);  // sent at 100 ms
  Complete(s, 1, 150, 100 * kMs, 500 * kUs, 6 * kMs);
  ASSERT_EQ(s.base(0), static_cast<uint64_t>(600 * kMs));
  // 2 in flight on path 1, 3 with this one: 600 ms probes within 1/64 of
  // them come every 64 x 600 ms / 3 = 12.8 s, so every 10 windows.
  s.OnSubmit(1, Read(), 800 * kMs);
  s.OnSubmit(1, Read(), 800 * kMs);
  s.OnSubmit(1, Read(), 1100 * kMs);
  s.OnComplete(1, Read(), {.now_ns = 1100 * kMs, .latency_ns = 6 * kMs});
  EXPECT_EQ(s.Select(Read()), 1);  // a window after its last I/O: not yet
  s.OnSubmit(1, Read(), 10100 * kMs - 1);
  s.OnComplete(1, Read(), {.now_ns = 10100 * kMs - 1, .latency_ns = 6 * kMs});
  EXPECT_EQ(s.Select(Read()), 1);
  s.OnSubmit(1, Read(), 10100 * kMs);
  s.OnComplete(1, Read(), {.now_ns = 10100 * kMs, .latency_ns = 6 * kMs});
  EXPECT_EQ(s.Select(Read()), 0);  // 10 windows after: probed
}

}  // namespace
}  // namespace pathwise::policy

// SPDX-License-Identifier: Apache-2.0
// The pathwise selector's latency by load at sending: a path's I/Os that
// wait behind the ones already on it are not worth an idle path's; nor are
// those sent to a path that has stopped completing the ones it holds.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <queue>
#include <tuple>
#include <vector>

#include "policy/pathwise_selector.h"
#include "tests/unit/policy/selector_fixture.h"

namespace pathwise::policy {
namespace {

// A closed loop of `outstanding` reads over two paths for `end_ns`, ticking
// the selector every second. Path 0 is a link that sends one I/O's data at
// a time (`tx_ns` each, in order) plus `fixed_ns` the I/Os spend in
// parallel; path 1 takes `slow_ns` with no queue. The caller's duty is
// done as the lab and the datapath do it: `ahead` is the path's in-flight
// count before the I/O, unless `tell_ahead` is false. Returns the
// completions per path in the last second. The times are functions of
// the time the I/O is sent.
std::array<int, 2> LinkAndIdlePath(
    PathwiseSelector& s, int outstanding,
    const std::function<int64_t(int64_t)>& tx_ns,
    const std::function<int64_t(int64_t)>& fixed_ns,
    const std::function<int64_t(int64_t)>& slow_ns, int64_t end_ns,
    bool tell_ahead = true) {
  // (completion time, path, ahead, submitted at).
  using Io = std::tuple<int64_t, int, int, int64_t>;
  std::priority_queue<Io, std::vector<Io>, std::greater<>> out;
  int64_t link_free = 0;
  int64_t next_tick = kSec;
  std::array<int, 2> done{};
  const auto submit = [&](int64_t now) {
    IoRequest io = Read();
    const int p = s.Select(io);
    io.ahead = tell_ahead ? s.inflight(p) : -1;
    s.OnSubmit(p, io, now);
    int64_t at = now + slow_ns(now);
    if (p == 0) {
      link_free = std::max(link_free, now) + tx_ns(now);
      at = link_free + fixed_ns(now);
    }
    out.emplace(at, p, io.ahead, now);
  };
  for (int k = 0; k < outstanding; ++k) submit(0);
  while (!out.empty()) {
    const auto [now, p, ahead, sent] = out.top();
    if (now >= end_ns) break;
    out.pop();
    while (now >= next_tick) {
      s.Tick(next_tick);
      next_tick += kSec;
    }
    IoRequest io = Read();
    io.ahead = ahead;
    s.OnComplete(p, io, {.now_ns = now, .latency_ns = now - sent});
    if (now >= end_ns - kSec) ++done[p];
    submit(now);
  }
  return done;
}

std::function<int64_t(int64_t)> Fixed(int64_t tx_ns) {
  return [tx_ns](int64_t) { return tx_ns; };
}

// Four outstanding 64k reads: path 0's link sends one in 334 us and each
// then takes 340 us more; path 1 serves one in 830 us. Two on each path is
// the best split: 2 / 674 us + 2 / 830 us = 5377 a second. Filling path 0
// to its cap (its knee of two, plus slack: three) leaves its third I/O
// waiting for the link while path 1 could have served it: 2994 + 1205 =
// 4199 a second.
TEST(PathwiseLoad, AnIoThatWouldWaitOnTheFastPathGoesToAnIdleOne) {
  PathwiseSelector s({.window_ns = 1 * kSec});
  const std::vector<PathInfo> paths = {Path(), Path()};
  s.SetPaths(paths);
  const std::array<int, 2> done = LinkAndIdlePath(
      s, 4, Fixed(334 * kUs), Fixed(340 * kUs), Fixed(830 * kUs), 4 * kSec);
  const int total = done[0] + done[1];
  EXPECT_GE(total, 5100) << done[0] << " + " << done[1];
  EXPECT_GE(done[1], 2000) << done[0] << " + " << done[1];
}

// The same loop without `ahead` (a caller that does not say): the selector
// cannot tell what one more I/O costs there, and fills path 0 to its cap.
// Shows that the test above depends on the latency by load.
TEST(PathwiseLoad, WithoutTheLoadAtSendingThePathIsFilledToItsCap) {
  PathwiseSelector s({.window_ns = 1 * kSec});
  const std::vector<PathInfo> paths = {Path(), Path()};
  s.SetPaths(paths);
  const std::array<int, 2> done =
      LinkAndIdlePath(s, 4, Fixed(334 * kUs), Fixed(340 * kUs),
                      Fixed(830 * kUs), 4 * kSec, /*tell_ahead=*/false);
  EXPECT_LT(done[0] + done[1], 4700) << done[0] << " + " << done[1];
}

// A path with no queue is still filled: the latency at each load stays
// its unloaded latency, so the fastest path takes every I/O but the
// probes (a latency-bound pair: 1 ms and 3 ms, 16 outstanding).
TEST(PathwiseLoad, APathWithoutAQueueIsStillFilled) {
  PathwiseSelector s({.window_ns = 1 * kSec});
  const std::vector<PathInfo> paths = {Path(), Path()};
  s.SetPaths(paths);
  const std::array<int, 2> done = LinkAndIdlePath(
      s, 16, Fixed(0), Fixed(1 * kMs), Fixed(3 * kMs), 4 * kSec);
  EXPECT_GE(done[0], 15000) << done[0] << " + " << done[1];
  EXPECT_LE(done[1], 300) << done[0] << " + " << done[1];
}

// What a load costs is learned afresh every tick. For 3 s path 0 serves
// one I/O at a time, in 340 us each, and path 1 takes 5 ms: path 0 holds
// three or four I/Os, queued (0.7-1.4 ms at two and three ahead). Then
// path 0 serves any number at once, still in 340 us (its unloaded latency
// does not change, so nothing says it got faster), and path 1 takes
// 830 us. Kept, the loads' latencies from the queue (above path 1's)
// would hold path 0 at two I/Os for good, since it is no longer given
// more: 2 / 340 us + 2 / 830 us. Forgotten at the tick, path 0 takes all
// four but the probes.
TEST(PathwiseLoad, WhatALoadCostsIsLearnedAfreshEveryTick) {
  PathwiseSelector s({.window_ns = 1 * kSec});
  const std::vector<PathInfo> paths = {Path(), Path()};
  s.SetPaths(paths);
  const auto before = [](int64_t a, int64_t b) {
    return [a, b](int64_t now) { return now < 3 * kSec ? a : b; };
  };
  const std::array<int, 2> done =
      LinkAndIdlePath(s, 4, before(340 * kUs, 0), before(0, 340 * kUs),
                      before(5 * kMs, 830 * kUs), 6 * kSec);
  EXPECT_GE(done[0], 10 * done[1]) << done[0] << " + " << done[1];
}

// Path 0 serves 100k/s at 100 us, path 1 10k/s at 1 ms; both learned by
// 21 ms, when each is given `n0` and `n1` I/Os. Then path 1 completes one
// at 71 ms, and path 0, none since 21 ms.
PathwiseSelector StalledFastPath(int n0, int n1) {
  PathwiseSelector s({.window_ns = 1 * kSec});
  const std::vector<PathInfo> paths = {Path(), Path()};
  s.SetPaths(paths);
  Complete(s, 0, 2000, 1 * kMs, 10 * kUs, 100 * kUs);
  Complete(s, 1, 200, 1 * kMs, 100 * kUs, 1 * kMs);
  for (int k = 0; k < n0; ++k) s.OnSubmit(0, Read(), 21 * kMs);
  for (int k = 0; k < n1 + 1; ++k) s.OnSubmit(1, Read(), 21 * kMs);
  return s;
}

// A path whose estimates only its completions update keeps them while it
// completes nothing (a loss episode's retransmission timeouts, a target
// that stopped answering before the path is declared down): by them it
// kept taking I/O until its cap, and at its cap by the rate it had before
// (a drawn case held 293 I/Os on a path in a loss episode, 0.78x the best
// policy). Below the caps (rule 3) and at them (rule 4), a path that has
// completed none of its I/Os for 50 ms is ranked by that: an I/O sent
// there waits at least behind them.
TEST(PathwiseLoad, APathThatStoppedCompletingTakesNoMoreIo) {
  {
    PathwiseSelector s = StalledFastPath(5, 5);
    ASSERT_GT(s.cap(0), 5);
    ASSERT_GT(s.cap(1), 5);
    EXPECT_EQ(s.Select(Read()), 0);  // the fast path, below its cap
    s.OnComplete(1, Read(), {.now_ns = 71 * kMs, .latency_ns = 1 * kMs});
    EXPECT_EQ(s.Select(Read()), 1);
  }
  {
    PathwiseSelector s = StalledFastPath(30, 25);
    ASSERT_LE(s.cap(0), 30);
    ASSERT_LE(s.cap(1), 25);
    EXPECT_EQ(s.Select(Read()), 0);  // 31 in 310 us against 26 in 2.6 ms
    s.OnComplete(1, Read(), {.now_ns = 71 * kMs, .latency_ns = 1 * kMs});
    EXPECT_EQ(s.Select(Read()), 1);
  }
}

}  // namespace
}  // namespace pathwise::policy

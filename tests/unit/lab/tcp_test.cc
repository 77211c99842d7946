// SPDX-License-Identifier: Apache-2.0
// Unit tests of the lab's TCP model (lab/tcp.h): the window's growth within
// an I/O, CUBIC's regrowth by time and its idle rule, loss drawn when the
// segments leave, one window reduction per loss episode, the tail loss probe,
// a window's worth of segments leaving at once, and the receiver's window.
#include "lab/tcp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "lab/random.h"
#include "lab/scenario.h"

namespace pathwise::lab {
namespace {

// The window grows while an I/O's segments go: one round per window,
// doubling below ssthresh, one more segment per round above.
TEST(TcpTest, TheWindowGrowsWithinAnIo) {
  constexpr double kNoSsthresh = TcpConn::kMaxCwnd;
  // A window that holds them all: a fraction of a round.
  EXPECT_DOUBLE_EQ(TcpPath::SendRounds(1000, kNoSsthresh, 3), 0.003);
  // Slow start from 10: 10 + 20 + 40 + 80 + 160 + 320 = 630, then 97 of
  // 640: 6.15 rounds for a 1 MiB I/O (727 segments), not 72.7.
  EXPECT_NEAR(TcpPath::SendRounds(10, kNoSsthresh, 727), 6 + 97.0 / 640, 1e-9);
  // After a timeout (window 1, ssthresh 2): 1, then 2, 3, 4, ... per round:
  // 1 + (2 + ... + 37) = 703, then 24 of 38: about 37 rounds, not 727.
  EXPECT_NEAR(TcpPath::SendRounds(1, 2, 727), 37 + 24.0 / 38, 1e-9);
}

// CUBIC after a fast retransmit: the window falls to 0.7 of itself, then
// grows by time, not by segments: back to W_max K = cbrt(0.3 W / 0.4)
// seconds after the epoch began, however many segments were delivered,
// and past it beyond. Reno, from the same loss, gains about one segment
// per round trip (here per delivered window).
TEST(TcpTest, CubicRegainsItsWindowByTime) {
  const int64_t rtt = 20'000'000;  // 20 ms
  constexpr int kSegments = 10;
  const TcpModel model;
  // A connection at W = 1000 in congestion avoidance, its next I/O sent in
  // a loss episode that ends at 1 s, and the first draw (seed) that
  // repairs it by fast retransmit rather than the timer.
  auto after_one_loss = [&](bool cubic, TcpPath& path) -> TcpConn* {
    for (uint64_t seed = 1; seed < 200; ++seed) {
      path = TcpPath(1, kSegments);
      path.SetCubic(cubic);
      path.SetLossSchedule({{0, 0.3}, {1'000'000'000, 0}});
      TcpConn& c = path.conn(0);
      c.cwnd = c.ssthresh = 1000;
      c.inflight = 100;  // enough segments in flight for fast retransmit
      Rng rng(seed);
      path.Deliver(c, 10'000'000, rtt, model, rng, 0);
      if (c.cwnd > 1) return &c;
    }
    return nullptr;
  };
  TcpPath path(1, kSegments);
  TcpConn* c = after_one_loss(true, path);
  ASSERT_NE(c, nullptr);
  ASSERT_DOUBLE_EQ(c->cwnd, 1000 * kCubicBeta);
  EXPECT_DOUBLE_EQ(c->w_max, 1000);
  // Deliveries every 10 ms from 1 s: K = cbrt(300 / 0.4) = 9.09 s.
  const double k_s = std::cbrt(1000 * (1 - kCubicBeta) / kCubicC);
  double at_half_k = 0;
  Rng rng(1);
  for (int64_t t = 1'000'000'000; t < 11'000'000'000; t += 10'000'000) {
    path.Deliver(*c, t, rtt, model, rng, t);
    if (at_half_k == 0 && t >= 1'000'000'000 + k_s * 5e8) at_half_k = c->cwnd;
  }
  // The plateau: most of the way back by K/2 (the cubic is 962 there),
  // W_max by K, hardly beyond it.
  EXPECT_GT(at_half_k, 0.9 * 1000);
  EXPECT_LT(at_half_k, 1000);
  EXPECT_NEAR(c->cwnd, 1000, 30);
  // Reno from the same loss: 1000 deliveries of 10 segments at a window of
  // ~500 gain about 20 segments.
  TcpPath reno(1, kSegments);
  TcpConn* r = after_one_loss(false, reno);
  ASSERT_NE(r, nullptr);
  ASSERT_DOUBLE_EQ(r->cwnd, 500);
  for (int64_t t = 1'000'000'000; t < 11'000'000'000; t += 10'000'000) {
    reno.Deliver(*r, t, rtt, model, rng, t);
  }
  EXPECT_NEAR(r->cwnd, 520, 2);
}

// An idle connection's epoch moves on by its idle time (Linux's
// bictcp_cwnd_event): time without I/O does not grow the window.
TEST(TcpTest, CubicIdleTimeDoesNotGrowTheWindow) {
  const int64_t rtt = 20'000'000;
  TcpPath path(1, 10);
  path.SetCubic(true);
  TcpConn& c = path.conn(0);
  c.cwnd = c.ssthresh = 100;
  c.w_max = 200;
  c.inflight = 1;
  path.Send(c, 0, rtt);
  const TcpModel model;
  Rng rng(1);
  path.Deliver(c, rtt, rtt, model, rng, 0);  // the epoch starts
  const int64_t epoch = c.epoch_ns;
  const double w = c.cwnd;
  // 30 s later the connection sends again, from idle.
  path.Send(c, 30'000'000'000, rtt);
  EXPECT_GE(c.epoch_ns, epoch + 29'000'000'000);
  path.Deliver(c, 30'000'000'000 + rtt, rtt, model, rng, 30'000'000'000);
  EXPECT_LT(c.cwnd, w + 1);
}

// Segments are lost at the rate in effect when they leave: an I/O sent
// after a loss episode ended is not delayed by it, one sent during it is.
TEST(TcpTest, LossIsDrawnWhenTheSegmentsLeave) {
  const int64_t rtt = 10'000'000;
  const TcpModel model;
  TcpPath path(1, 727);
  path.SetLossSchedule({{1'000'000'000, 0.5}, {2'000'000'000, 0}});
  Rng rng(7);
  TcpConn& c = path.conn(0);
  // Sent before and after the episode: on time.
  EXPECT_EQ(path.Deliver(c, 600'000'000, rtt, model, rng, 500'000'000),
            600'000'000);
  EXPECT_EQ(path.Deliver(c, 2'600'000'000, rtt, model, rng, 2'500'000'000),
            2'600'000'000);
  // Sent within it (though it arrives after): half its segments lost.
  EXPECT_GT(path.Deliver(c, 2'600'000'000, rtt, model, rng, 1'500'000'000),
            2'600'000'000 + rtt);
}

// One reduction per loss episode, as Linux enters recovery once for the
// data in flight: the losses of I/Os sent before the first loss was seen
// leave ssthresh where that loss put it, and their acknowledgements do not
// grow the window. A loss among segments sent after it begins a new one.
TEST(TcpTest, OneReductionPerLossEpisode) {
  const int64_t rtt = 20'000'000;
  constexpr int kSegments = 10;
  const TcpModel model;
  for (bool cubic : {true, false}) {
    SCOPED_TRACE(cubic ? "cubic" : "reno");
    TcpPath path(1, kSegments);
    path.SetCubic(cubic);
    path.SetLossSchedule({{0, 0.3}});
    TcpConn& c = path.conn(0);
    c.cwnd = c.ssthresh = 1000;
    c.inflight = 100;
    Rng rng(3);
    // 50 I/Os sent within the first round trip: nearly all lose a segment.
    int lost = 0;
    for (int64_t i = 0; i < 50; ++i) {
      const int64_t sent = i * 100'000;
      if (path.Deliver(c, sent + rtt, rtt, model, rng, sent) > sent + rtt) {
        ++lost;
      }
    }
    EXPECT_GT(lost, 40);
    EXPECT_DOUBLE_EQ(c.ssthresh, cubic ? 1000 * kCubicBeta : 500);
    // Sent after the episode (a timeout extends it to what was sent before
    // the timeout): its loss reduces again.
    const double first = c.ssthresh;
    for (int i = 0; c.ssthresh == first; ++i) {
      ASSERT_LT(i, 100) << "no second reduction";
      const int64_t sent = c.episode_ns + 1;
      path.Deliver(c, sent + rtt, rtt, model, rng, sent);
    }
    EXPECT_LT(c.ssthresh, first);
  }
  // Acknowledgements of data sent before the episode began do not grow the
  // window; those of data sent after it do.
  TcpPath path(1, kSegments);
  path.SetCubic(true);
  path.SetLossSchedule({{0, 0.3}, {1'000'000, 0}});
  TcpConn& c = path.conn(0);
  c.inflight = 100;
  for (uint64_t seed = 1; c.cwnd != 1000 * kCubicBeta; ++seed) {
    ASSERT_LT(seed, 200u) << "no seed repairs the loss by fast retransmit";
    c = TcpConn{};
    c.cwnd = c.ssthresh = 1000;
    c.inflight = 100;
    Rng rng(seed);
    path.Deliver(c, rtt, rtt, model, rng, 0);
  }
  Rng rng(1);
  path.Deliver(c, rtt + 2'000'000, rtt, model, rng, 2'000'000);
  EXPECT_DOUBLE_EQ(c.cwnd, 1000 * kCubicBeta);
  path.Deliver(c, 2 * rtt + 1, rtt, model, rng, rtt + 1);
  EXPECT_GT(c.cwnd, 1000 * kCubicBeta);
}

// A loss with too few segments after it for duplicate ACKs: with the tail
// loss probe (Linux's default) it is repaired two round trips and 8 ms
// after it would have arrived, plus the probe's round trip, and the window
// falls as after fast retransmit; without it, the timer (200 ms) repairs it
// and the window restarts from one segment. In the loss state a timeout
// began, no probe is sent.
TEST(TcpTest, TheTailLossProbeRepairsALossWithoutTheTimer) {
  const int64_t rtt = 20'000'000;
  constexpr int kSegments = 3;
  for (bool tlp : {true, false}) {
    SCOPED_TRACE(tlp ? "tlp" : "no tlp");
    TcpModel model;
    model.tlp = tlp;
    // The first draw that loses a segment and not its repair.
    for (uint64_t seed = 1;; ++seed) {
      ASSERT_LT(seed, 500u) << "no draw loses once";
      TcpPath path(1, kSegments);
      path.SetCubic(true);
      path.SetLossSchedule({{0, 0.2}});
      TcpConn& c = path.conn(0);
      c.cwnd = c.ssthresh = 100;
      c.inflight = 1;  // 3 segments: no duplicate ACKs
      Rng rng(seed);
      const int64_t at = path.Deliver(c, rtt, rtt, model, rng, 0);
      if (at == rtt) continue;  // nothing lost
      const int64_t probe = 2 * rtt + 8'000'000 + rtt;
      if (tlp) {
        if (at != rtt + probe) continue;  // the probe was lost too
        EXPECT_DOUBLE_EQ(c.cwnd, 100 * kCubicBeta);
        EXPECT_FALSE(c.in_loss);
      } else {
        if (at != rtt + 200'000'000) continue;  // the retransmission lost
        EXPECT_DOUBLE_EQ(c.cwnd, 1);
        EXPECT_TRUE(c.in_loss);
      }
      break;
    }
  }
  // Within a timeout's loss episode: the timer, not a probe.
  TcpModel model;
  TcpPath path(1, kSegments);
  path.SetCubic(true);
  path.SetLossSchedule({{0, 0.2}});
  TcpConn& c = path.conn(0);
  c.cwnd = 1;
  c.inflight = 1;
  c.in_loss = true;
  c.episode_ns = 10 * rtt;
  for (uint64_t seed = 1;; ++seed) {
    ASSERT_LT(seed, 500u) << "no draw loses once";
    Rng rng(seed);
    const int64_t at = path.Deliver(c, 2 * rtt, rtt, model, rng, rtt);
    if (at == 2 * rtt) continue;
    EXPECT_GE(at, 2 * rtt + 200'000'000);
    break;
  }
}

// Nothing paces the segments within a round trip: a window's worth leaves
// at once, and later I/Os follow as the window's round trips allow; an I/O
// of two windows leaves the second when the first is acknowledged.
TEST(TcpTest, AWindowsWorthLeavesAtOnce) {
  const int64_t rtt = 10'000'000;
  TcpPath path(1, 10);
  TcpConn& c = path.conn(0);
  c.cwnd = c.ssthresh = 100;
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(path.Send(c, 0, rtt), 0) << i;  // 100 segments
  }
  int64_t last = 0;
  for (int i = 10; i < 100; ++i) last = path.Send(c, 0, rtt);
  // 1000 segments: the tenth window leaves nine round trips in.
  EXPECT_EQ(last, 9 * rtt);
  // An idle connection, one I/O of 200 segments at a window of 100.
  TcpPath big(1, 200);
  TcpConn& b = big.conn(0);
  b.cwnd = b.ssthresh = 100;
  EXPECT_NEAR(static_cast<double>(big.Send(b, 5 * rtt, rtt)), 6.0 * rtt,
              rtt / 50.0);
}

// The receiver's window bounds the congestion window: a connection it
// limits grows no further (Linux grows the window only while it is what
// limits the connection), and an I/O's rounds count it as the most.
TEST(TcpTest, TheReceiversWindowBoundsTheCongestionWindow) {
  constexpr double kNoSsthresh = TcpConn::kMaxCwnd;
  // Slow start from 10 stops at 100: 10 + 20 + 40 + 80 = 150, then 100
  // per round: 727 segments take 4 + 5 rounds and 77 of 100.
  EXPECT_NEAR(TcpPath::SendRounds(10, kNoSsthresh, 727, 100), 9.77, 1e-9);
  // From a window above the limit, the limit.
  EXPECT_NEAR(TcpPath::SendRounds(500, kNoSsthresh, 250, 100), 2.5, 1e-9);
  const int64_t rtt = 10'000'000;
  const TcpModel model;
  for (bool cubic : {true, false}) {
    SCOPED_TRACE(cubic ? "cubic" : "reno");
    TcpPath path(1, 10);
    path.SetCubic(cubic);
    path.SetWindowLimit(100);
    TcpConn& c = path.conn(0);
    Rng rng(1);
    int64_t t = 0;
    for (int i = 0; i < 1000; ++i, t += rtt / 10) {
      const int64_t sent = path.Send(c, t, rtt);
      path.Deliver(c, sent + rtt, rtt, model, rng, sent);
    }
    EXPECT_DOUBLE_EQ(c.cwnd, 100);
    // In congestion avoidance too (above ssthresh), under CUBIC's target.
    c.ssthresh = 50;
    c.cwnd = 60;
    for (int i = 0; i < 10000; ++i, t += rtt / 10) {
      const int64_t sent = path.Send(c, t, rtt);
      path.Deliver(c, sent + rtt, rtt, model, rng, sent);
    }
    EXPECT_DOUBLE_EQ(c.cwnd, 100);
  }
}

}  // namespace
}  // namespace pathwise::lab

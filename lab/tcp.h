// SPDX-License-Identifier: Apache-2.0
// The TCP model of one path: its connections, each with a CUBIC (Linux's
// default) or Reno congestion window, per-segment loss with fast retransmit or
// the retransmission timer, and in-order delivery (head-of-line blocking).
// lab/README.md describes the model and its simplifications.
#ifndef PATHWISE_LAB_TCP_H_
#define PATHWISE_LAB_TCP_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "lab/random.h"
#include "lab/scenario.h"

namespace pathwise::lab {

struct TcpConn {
  static constexpr double kInitialCwnd = 10;  // Linux's initial window
  static constexpr double kMaxCwnd = 1 << 20;

  int64_t hol_from = 0, hol_until = 0;  // delivery blocked in this span
  // The window's pace: the I/O's segments leave a round trip before it
  // (Send), at the soonest when they are ready.
  int64_t send_free = 0;
  int inflight = 0;  // I/Os on the connection
  // Congestion window, in segments: it bounds the segments in flight, so
  // whether a loss can be repaired by fast retransmit (dupthresh later
  // segments must be in flight).
  double cwnd = kInitialCwnd;
  double ssthresh = kMaxCwnd;
  // CUBIC: the window before the last reduction (W_max), and the start of
  // the congestion-avoidance epoch (-1: none yet), its K (s) and origin.
  double w_max = 0;
  int64_t epoch_ns = -1;
  double k_s = 0;
  double origin = 0;
  // The loss episode: when the last reduction began (-1: none). Segments
  // sent before it belong to it, as Linux's recovery covers the data sent
  // before it began (up to high_seq): their losses do not reduce the
  // window again, and their acknowledgements do not grow it.
  int64_t episode_ns = -1;
  bool in_loss = false;  // the episode began or went on with a timeout
};

// Linux's tcp_cubic.c constants: the window grows as
// origin + C (t - K)^3 segments, t in seconds since the epoch began, and a
// loss multiplies it by beta.
inline constexpr double kCubicC = 0.4;
inline constexpr double kCubicBeta = 717.0 / 1024;
// Reno's pace at CUBIC's beta (segments per round trip), the floor CUBIC's
// TCP-friendly region keeps: 3 (1 - beta) / (1 + beta).
inline constexpr double kCubicRenoPace =
    3 * (1 - kCubicBeta) / (1 + kCubicBeta);

// A path's connections. Every I/O on the path carries `segments` segments
// (data, command and completion).
class TcpPath {
 public:
  TcpPath(int queues, int segments)
      : conns_(static_cast<size_t>(queues)), segments_(segments) {}

  // CUBIC (Linux's default) or Reno growth and reduction; Reno until set.
  void SetCubic(bool cubic) { cubic_ = cubic; }
  // The receiver's window, in segments: the congestion window grows no
  // further (a connection the receiver limits is not limited by its
  // congestion window, and Linux grows that only while it is). Unbounded
  // until set.
  void SetWindowLimit(double segments) {
    limit_ = std::clamp(segments, 1.0, TcpConn::kMaxCwnd);
  }

  int queues() const { return static_cast<int>(conns_.size()); }
  TcpConn& conn(int i) { return conns_[i]; }
  // The per-segment loss probability over the run: `steps` of (from when,
  // probability), in time order, a later step at the same time winning; 0
  // before the first. Segments are lost at the probability in effect when
  // they leave, which for an I/O queued behind others on its connection is
  // later than its submission: with the loss drawn at submission, the I/Os
  // queued on a connection during a 1 s loss episode each paid for it while
  // they went out one by one for 15 s after it ended.
  void SetLossSchedule(const std::vector<std::pair<int64_t, double>>& steps) {
    steps_.clear();
    any_loss_ = false;
    for (const auto& [from_ns, loss] : steps) {
      if (!steps_.empty() && steps_.back().from_ns == from_ns) {
        steps_.pop_back();
      }
      steps_.push_back({from_ns, loss, std::pow(1 - loss, segments_)});
      any_loss_ = any_loss_ || loss > 0;
    }
  }
  // The path went away: its connections start afresh.
  void ResetConnections() {
    for (TcpConn& c : conns_) c = TcpConn{};
  }

  // The congestion window bounds the connection: at most cwnd segments per
  // round trip, the window growing as they are acknowledged, so the I/O's
  // segments, ready at `t`, take SendRounds round trips (FIFO per
  // connection). Nothing paces them within a round (CUBIC on Linux's
  // default qdisc sends what the window allows at once): the connection's
  // pace is kept as a virtual time, send_free, and the I/O's last segment
  // leaves a round trip before it, as soon as `t`. So a window's worth
  // leaves at once, an I/O of a whole window leaves when the window before
  // it is acknowledged, and an I/O within a round leaves at most one round
  // trip earlier than TCP's ACK clock would let it (a round's segments are
  // spread over it). Returns when the last one leaves.
  // Under CUBIC a connection that sends again after going idle (no I/O on
  // it) moves its epoch on by the idle time, as Linux does
  // (bictcp_cwnd_event), so that idle time does not grow the window.
  ABSL_ATTRIBUTE_ALWAYS_INLINE int64_t Send(TcpConn& c, int64_t t,
                                            int64_t rtt) const {
    const int64_t start = std::max(t, c.send_free);
    if (cubic_ && c.inflight == 1 && c.epoch_ns >= 0 && t > c.send_free) {
      c.epoch_ns = std::min(c.epoch_ns + (t - c.send_free), t);
    }
    const double rounds =
        cubic_ ? CubicSendRounds(c, start, rtt, segments_, limit_)
               : SendRounds(c.cwnd, c.ssthresh, segments_, limit_);
    c.send_free =
        start + static_cast<int64_t>(rounds * static_cast<double>(rtt));
    return std::max(t, c.send_free - rtt);
  }

  // Round trips to send k segments from a window of w: one round per
  // window, which doubles each round below ssthresh (every acknowledged
  // segment opens it by one) and grows by one per round above; the last,
  // partial round at the window's pace. k/w when the window holds them
  // all. Without the growth, a 1 MiB I/O (727 segments) sent after a
  // timeout (window 1) took 727 round trips: 25 s at 35 ms, where Reno
  // needs about 37 (ssthresh 2) and slow start from 10 about 6. The window
  // never exceeds `limit` (the receiver's).
  ABSL_ATTRIBUTE_ALWAYS_INLINE static double SendRounds(
      double w, double ssthresh, double k, double limit = TcpConn::kMaxCwnd) {
    w = std::min(w, limit);
    double rounds = 0;
    while (k > w) {
      k -= w;
      rounds += 1;
      w = std::min(limit, w < ssthresh ? SlowStartRound(w, ssthresh) : w + 1);
    }
    return rounds + k / w;
  }

  // One round of slow start: the window doubles, but stops at ssthresh
  // (and grows by at least one).
  ABSL_ATTRIBUTE_ALWAYS_INLINE static double SlowStartRound(double w,
                                                            double ssthresh) {
    return std::min(2 * w, std::max(ssthresh, w + 1));
  }

  // SendRounds under CUBIC: above ssthresh the window grows each round
  // towards the cubic target of that round's time (at most by half, at
  // least at Reno's pace), not by one segment.
  ABSL_ATTRIBUTE_ALWAYS_INLINE static double CubicSendRounds(
      const TcpConn& c, int64_t t, int64_t rtt, double k, double limit) {
    double w = std::min(c.cwnd, limit);
    if (k <= w) return k / w;
    TcpConn e = c;  // the epoch as it would start now
    if (e.epoch_ns < 0 && w >= e.ssthresh) StartEpoch(e, t);
    double rounds = 0;
    while (k > w) {
      k -= w;
      rounds += 1;
      const int64_t at =
          t + static_cast<int64_t>(rounds * static_cast<double>(rtt));
      if (w < e.ssthresh) {
        w = SlowStartRound(w, e.ssthresh);
        if (w >= e.ssthresh && e.epoch_ns < 0) {
          e.cwnd = w;
          StartEpoch(e, at);
        }
      } else {
        const double target = CubicTarget(e, at, rtt);
        w += std::max(kCubicRenoPace, std::min(target - w, w / 2));
      }
      w = std::min(w, limit);
    }
    return rounds + k / w;
  }

  // CUBIC's epoch begins at the first growth after a reduction: K is the
  // time the cubic takes back to W_max (0 when the window is above it).
  ABSL_ATTRIBUTE_ALWAYS_INLINE static void StartEpoch(TcpConn& c, int64_t t) {
    c.epoch_ns = t;
    if (c.w_max > c.cwnd) {
      c.k_s = std::cbrt((c.w_max - c.cwnd) / kCubicC);
      c.origin = c.w_max;
    } else {
      c.k_s = 0;
      c.origin = c.cwnd;
    }
  }
  // The window CUBIC aims at, one round trip after `t` (Linux adds the
  // minimum round trip to the time since the epoch).
  ABSL_ATTRIBUTE_ALWAYS_INLINE static double CubicTarget(const TcpConn& c,
                                                         int64_t t,
                                                         int64_t rtt) {
    const double x = static_cast<double>(t - c.epoch_ns + rtt) * 1e-9 - c.k_s;
    return std::min(c.origin + kCubicC * x * x * x, TcpConn::kMaxCwnd);
  }

  // The I/O's segments would all arrive at `t`: draws their losses (from
  // `rng`, only when the path loses segments), adds the recovery time,
  // updates the window and waits out a stall in progress on the connection.
  // Returns when the I/O is delivered.
  // `sent_ns`: when its last segment left (Send).
  ABSL_ATTRIBUTE_ALWAYS_INLINE int64_t Deliver(TcpConn& c, int64_t t,
                                               int64_t rtt,
                                               const TcpModel& model, Rng& rng,
                                               int64_t sent_ns) {
    if (any_loss_) LossAt(sent_ns);
    if (loss_ > 0) {
      t = Lossy(c, t, rtt, model, rng, sent_ns);
    } else {
      Grow(c, t, rtt, sent_ns);
    }
    // In-order delivery on the connection: wait out a stall in progress.
    if (t >= c.hol_from && t < c.hol_until) t = c.hol_until;
    return t;
  }

 private:
  // The window's growth as the I/O's segments, which left at `sent_ns`, are
  // delivered: none for segments of the loss episode (sent before it began),
  // as Linux does not grow the window in recovery.
  ABSL_ATTRIBUTE_ALWAYS_INLINE void Grow(TcpConn& c, int64_t t, int64_t rtt,
                                         int64_t sent_ns) const {
    if (sent_ns <= c.episode_ns || c.cwnd >= limit_) return;
    if (cubic_) {
      GrowCubic(c, segments_, t, rtt);
    } else {
      GrowCwnd(c, segments_);
    }
    c.cwnd = std::min(c.cwnd, limit_);
  }

  // Slow start: below ssthresh each of the k delivered segments opens the
  // window by one. Returns the segments delivered above it.
  ABSL_ATTRIBUTE_ALWAYS_INLINE static double SlowStart(TcpConn& c, double k) {
    if (c.cwnd < c.ssthresh) {
      const double ss = std::min(k, std::ceil(c.ssthresh - c.cwnd));
      c.cwnd += ss;
      k -= ss;
    }
    return k;
  }

  // CUBIC (tcp_cubic.c): below ssthresh, slow start; above, each delivered
  // segment moves the window by (target - cwnd) / cwnd towards the cubic
  // target, at most 1/2 (1.5x per round trip), at least Reno's pace at
  // CUBIC's beta (its TCP-friendly region, taken as a floor), and by
  // 1/(100 cwnd) once at the target. Not modelled: HyStart, and the window
  // kept while the connection is not limited by it.
  ABSL_ATTRIBUTE_ALWAYS_INLINE static void GrowCubic(TcpConn& c, int segments,
                                                     int64_t t, int64_t rtt) {
    if (c.cwnd >= TcpConn::kMaxCwnd) return;
    const double k = SlowStart(c, segments);
    if (k <= 0) return;
    if (c.epoch_ns < 0) StartEpoch(c, t);
    const double target = CubicTarget(c, t, rtt);
    const double reno = k * kCubicRenoPace / c.cwnd;
    if (target > c.cwnd) {
      const double step = std::min((target - c.cwnd) / c.cwnd, 0.5) * k;
      c.cwnd += std::max(reno, std::min(step, target - c.cwnd));
    } else {
      c.cwnd += std::max(reno, k / (100 * c.cwnd));
    }
    c.cwnd = std::min(c.cwnd, TcpConn::kMaxCwnd);
  }

  // Reno: each delivered segment opens the window by one (slow start) or
  // by 1/cwnd (congestion avoidance). (Slow start adds its segments at
  // once; in congestion avoidance, with a window of 64 or more, the I/O's
  // k segments add k/cwnd at once, the per-segment sum to within
  // k^2/cwnd^3; below 64, segment by segment.)
  ABSL_ATTRIBUTE_ALWAYS_INLINE static void GrowCwnd(TcpConn& c, int segments) {
    if (c.cwnd >= TcpConn::kMaxCwnd) return;
    double k = SlowStart(c, segments);
    if (k <= 0) return;
    if (c.cwnd >= 64) {
      c.cwnd += k / c.cwnd;
      return;
    }
    for (; k > 0; --k) c.cwnd += 1.0 / c.cwnd;
  }

  int64_t Lossy(TcpConn& c, int64_t t, int64_t rtt, const TcpModel& model,
                Rng& rng, int64_t sent_ns);
  void Reduce(TcpConn& c, int64_t t, bool timeout, bool new_episode) const;
  int64_t Recovery(int64_t rtt, bool fast, int64_t probe_ns,
                   const TcpModel& model, Rng& rng, bool* timeout) const;
  static int64_t ProbeTimeout(const TcpConn& c, int64_t rtt, double in_flight,
                              const TcpModel& model, int64_t sent_ns);

  // Sets loss_ and no_loss_ to the step in effect at `t`.
  void LossAt(int64_t t) {
    auto it = std::upper_bound(
        steps_.begin(), steps_.end(), t,
        [](int64_t at, const LossStep& s) { return at < s.from_ns; });
    if (it == steps_.begin()) {
      loss_ = 0;
      no_loss_ = 1;
    } else {
      loss_ = std::prev(it)->loss;
      no_loss_ = std::prev(it)->no_loss;
    }
  }

  struct LossStep {
    int64_t from_ns;
    double loss;
    double no_loss;  // (1 - loss)^segments
  };
  std::vector<TcpConn> conns_;
  int segments_ = 1;
  std::vector<LossStep> steps_;
  bool any_loss_ = false;
  bool cubic_ = false;
  double limit_ = TcpConn::kMaxCwnd;  // the receiver's window, in segments
  double loss_ = 0;                   // the step of the I/O being delivered
  double no_loss_ = 1;                // (1 - loss)^segments
};

}  // namespace pathwise::lab

#endif  // PATHWISE_LAB_TCP_H_

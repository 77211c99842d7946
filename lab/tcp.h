// SPDX-License-Identifier: Apache-2.0
// The TCP model of one path: its connections, each with a Reno-like
// congestion window, per-segment loss with fast retransmit or the
// retransmission timer, and in-order delivery (head-of-line blocking).
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
  int64_t send_free = 0;  // when the window lets the next I/O's segments go
  int inflight = 0;       // I/Os on the connection
  // Congestion window, in segments: it bounds the segments in flight, so
  // whether a loss can be repaired by fast retransmit (dupthresh later
  // segments must be in flight).
  double cwnd = kInitialCwnd;
  double ssthresh = kMaxCwnd;
};

// A path's connections. Every I/O on the path carries `segments` segments
// (data, command and completion).
class TcpPath {
 public:
  TcpPath(int queues, int segments)
      : conns_(static_cast<size_t>(queues)), segments_(segments) {}

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

  // The congestion window paces the connection: at most cwnd segments per
  // round trip, the window growing as they are acknowledged, so the I/O's
  // segments, ready at `t`, take SendRounds round trips (FIFO per
  // connection). Returns when the last one leaves.
  ABSL_ATTRIBUTE_ALWAYS_INLINE int64_t Send(TcpConn& c, int64_t t,
                                            int64_t rtt) const {
    c.send_free =
        std::max(t, c.send_free) +
        static_cast<int64_t>(SendRounds(c.cwnd, c.ssthresh, segments_) *
                             static_cast<double>(rtt));
    return c.send_free;
  }

  // Round trips to send k segments from a window of w: one round per
  // window, which doubles each round below ssthresh (every acknowledged
  // segment opens it by one) and grows by one per round above; the last,
  // partial round at the window's pace. k/w when the window holds them
  // all. Without the growth, a 1 MiB I/O (727 segments) sent after a
  // timeout (window 1) took 727 round trips: 25 s at 35 ms, where Reno
  // needs about 37 (ssthresh 2) and slow start from 10 about 6.
  ABSL_ATTRIBUTE_ALWAYS_INLINE static double SendRounds(double w,
                                                        double ssthresh,
                                                        double k) {
    double rounds = 0;
    while (k > w) {
      k -= w;
      rounds += 1;
      w = w < ssthresh ? std::min(2 * w, std::max(ssthresh, w + 1)) : w + 1;
    }
    return rounds + k / w;
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
      t = Lossy(c, t, rtt, model, rng);
    } else {
      GrowCwnd(c, segments_);
    }
    // In-order delivery on the connection: wait out a stall in progress.
    if (t >= c.hol_from && t < c.hol_until) t = c.hol_until;
    return t;
  }

 private:
  // Each delivered segment opens the window by one (slow start) or by
  // 1/cwnd (congestion avoidance).
  // (Slow start adds its segments at once; in congestion avoidance, with a
  // window of 64 or more, the I/O's k segments add k/cwnd at once, the
  // per-segment sum to within k^2/cwnd^3; below 64, segment by segment.)
  ABSL_ATTRIBUTE_ALWAYS_INLINE static void GrowCwnd(TcpConn& c, int segments) {
    if (c.cwnd >= TcpConn::kMaxCwnd) return;
    double k = segments;
    if (c.cwnd < c.ssthresh) {
      const double ss = std::min(k, std::ceil(c.ssthresh - c.cwnd));
      c.cwnd += ss;
      k -= ss;
    }
    if (k <= 0) return;
    if (c.cwnd >= 64) {
      c.cwnd += k / c.cwnd;
      return;
    }
    for (; k > 0; --k) c.cwnd += 1.0 / c.cwnd;
  }

  int64_t Lossy(TcpConn& c, int64_t t, int64_t rtt, const TcpModel& model,
                Rng& rng);
  int64_t Recovery(int64_t rtt, bool fast, const TcpModel& model, Rng& rng,
                   bool* timeout) const;

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
  double loss_ = 0;     // the step of the I/O being delivered
  double no_loss_ = 1;  // (1 - loss)^segments
};

}  // namespace pathwise::lab

#endif  // PATHWISE_LAB_TCP_H_

// SPDX-License-Identifier: Apache-2.0
#include "lab/tcp.h"

namespace pathwise::lab {

// Time to recover one lost segment: fast retransmit (one round trip) when
// enough later segments are in flight to produce duplicate ACKs; else the
// tail loss probe, when `probe_ns` > 0: its timeout and a round trip for its
// answer, which repairs the loss as fast retransmit would (Linux's TLP with
// RACK); else the retransmission timer. A lost retransmission (or probe)
// waits for the timer, which doubles each time.
int64_t TcpPath::Recovery(int64_t rtt, bool fast, int64_t probe_ns,
                          const TcpModel& model, Rng& rng,
                          bool* timeout) const {
  int64_t rto = std::max(model.rto_min_ns, rtt);
  int64_t d = 0;
  if (fast || probe_ns > 0) {
    d = fast ? rtt : probe_ns + rtt;
    if (rng.Uniform() >= loss_) return d;
  }
  *timeout = true;
  d += rto;
  while (rng.Uniform() < loss_) {
    rto = std::min(rto * 2, model.rto_max_ns);
    d += rto;
  }
  return d;
}

// The tail loss probe's timeout (tcp_schedule_loss_probe): two round trips
// and TCP_TIMEOUT_MIN (2 jiffies: 8 ms at Debian's HZ of 250), or TCP_RTO_MIN
// with one segment in flight (a delayed ACK may be all that is missing), at
// most the timer's; 0 where Linux sends no probe: turned off, or in the
// loss state a timeout began, until its data is acknowledged.
int64_t TcpPath::ProbeTimeout(const TcpConn& c, int64_t rtt, double in_flight,
                              const TcpModel& model, int64_t sent_ns) {
  if (!model.tlp || (c.in_loss && sent_ns <= c.episode_ns)) return 0;
  constexpr int64_t kTimeoutMin = 8'000'000;
  const int64_t pto =
      2 * rtt + (in_flight <= 1 ? model.rto_min_ns : kTimeoutMin);
  return std::min(pto, std::max(model.rto_min_ns, rtt));
}

int64_t TcpPath::Lossy(TcpConn& c, int64_t t, int64_t rtt,
                       const TcpModel& model, Rng& rng, int64_t sent_ns) {
  // Later segments in flight on the connection, which the congestion
  // window bounds: fewer than dupthresh and only a probe or the timer
  // recovers.
  const double in_flight =
      std::min(c.cwnd, static_cast<double>(c.inflight) * segments_);
  const bool fast = in_flight - 1 >= model.dupthresh;
  const int64_t probe_ns =
      fast ? 0 : ProbeTimeout(c, rtt, in_flight, model, sent_ns);
  bool timeout = false;
  // One draw decides whether any of the k segments is lost, with
  // probability 1-(1-p)^k; only then is the first lost one found by
  // inversion and the later ones drawn one by one.
  int64_t delay = 0;
  const double u = rng.Uniform();
  if (u >= no_loss_) {
    const double any = 1 - no_loss_;
    const double target = (u - no_loss_) / any;
    double acc = 0, q = 1;
    int first = 0;
    for (; first < segments_ - 1; ++first) {
      acc += q * loss_ / any;
      if (target < acc) break;
      q *= 1 - loss_;
    }
    delay = Recovery(rtt, fast, probe_ns, model, rng, &timeout);
    for (int s = first + 1; s < segments_; ++s) {
      if (rng.Uniform() < loss_) {
        delay = std::max(delay,
                         Recovery(rtt, fast, probe_ns, model, rng, &timeout));
      }
    }
    Reduce(c, t, timeout, sent_ns > c.episode_ns);
  } else {
    Grow(c, t, rtt, sent_ns);
  }
  if (delay > 0) {
    if (t > c.hol_until) c.hol_from = t;  // a new stall
    c.hol_until = std::max(c.hol_until, t + delay);
    t += delay;
  }
  return t;
}

// A loss seen at `t`. Once per episode, as Linux enters recovery once for
// the data in flight: CUBIC's window falls to beta of itself and W_max
// remembers it (fast convergence: less when it had not regained the last
// W_max); Reno halves it. A timeout restarts from one segment even within
// an episode, and under CUBIC forgets W_max (Linux resets CUBIC on entering
// the loss state), but lowers ssthresh only when it begins the episode
// (tcp_enter_loss keeps it while a recovery's data is unacknowledged). The
// episode covers what was sent before its loss was seen; a timeout extends
// it to what was sent before the timeout, as it moves Linux's high_seq.
// Without the episode, every lost I/O of one window cut it again: ten
// losses in a round trip took a window to 0.7^10 of itself, where Linux
// takes it to 0.7.
void TcpPath::Reduce(TcpConn& c, int64_t t, bool timeout,
                     bool new_episode) const {
  if (new_episode || timeout) {
    c.episode_ns = std::max(c.episode_ns, t);
    c.in_loss = timeout;
  }
  if (new_episode) {
    if (cubic_) {
      c.w_max = c.cwnd < c.w_max ? c.cwnd * (1 + kCubicBeta) / 2 : c.cwnd;
      c.ssthresh = std::max(c.cwnd * kCubicBeta, 2.0);
    } else {
      c.ssthresh = std::max(c.cwnd / 2, 2.0);
    }
    c.cwnd = c.ssthresh;
    c.epoch_ns = -1;
  }
  if (timeout) {
    c.cwnd = 1.0;
    if (cubic_) c.w_max = 0;
    c.epoch_ns = -1;
  }
}

}  // namespace pathwise::lab

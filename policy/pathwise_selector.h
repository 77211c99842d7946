// SPDX-License-Identifier: Apache-2.0
// pathwise: a saturation-aware selector. A path's throughput grows with the
// I/O in flight on it only up to a knee, where whatever bounds it (its
// target's servers, its link, its TCP window) is busy; past the knee more
// I/O only queues there. For a fixed number of outstanding I/Os the most
// throughput comes from filling the lowest-latency path up to its knee and
// giving the rest to the next one. So each path learns, from its own
// completions only:
//   - `base`: its lowest completion latency (the latency without a queue,
//     like TCP Vegas' BaseRTT), over the last kBaseWindows ticks, from
//     completions that left it below its cap (a queue it was not given
//     cannot hide its base);
//   - `rate`: its completions per second, sampled over intervals of at
//     least one base latency and smoothed (1/4 new);
//   - `unloaded`: its mean latency where it was least loaded: per load
//     level (the I/Os in flight on it at a completion, in powers of two) a
//     running mean of latency; the least of the levels with enough
//     completions. Jitter raises every level's mean alike, queueing only
//     the levels past the knee, so this is the latency without a queue
//     but with the path's jitter, which `base` (a minimum) leaves out. It
//     also follows a path that changed within a few completions, where
//     `base` keeps the old minimum for kBaseWindows ticks: a completion in
//     under half of it starts the levels afresh (the path got faster),
//     and slower completions raise the means. But a level counts the
//     I/Os left in flight at a completion, not those ahead of it when it
//     was sent: on a path held at its knee (a link busy at two I/Os) every
//     level's completions waited behind others, and the least level's
//     mean is a queued latency (up to twice the unloaded one). So the
//     mean latency of I/Os sent to the empty path (the first completion
//     after one, on a path that serves in order), over the last
//     kBaseWindows ticks, bounds it from above. Kept for every op and per
//     op group (read, write, other): a path can serve reads and writes at
//     different latencies (a write cache, a link busy in one direction),
//     and the mix's mean says neither. An op group with no level or lone
//     I/O of its own yet takes the path's, but at least its own lowest
//     latency (kept per op group as `base` is): a busy path seldom
//     measures an op alone, and its base is its fastest op's;
//   - `sent`: per load at sending (the I/Os already in flight on it when
//     an I/O was sent: 1, 2, 3, 4-7, 8-15, ...; the caller passes it back
//     as IoRequest::ahead), the mean latency of those I/Os: what one more
//     I/O costs there. Learned afresh every tick: a load the path has not
//     been given since may cost less now (its loss episode over, its TCP
//     window grown back after a reconnect); kept until a tick passed
//     without a sample, they kept a path that came back up from its I/Os
//     for 6 s (a drawn case fell from 1.03x to 0.88x). A completion under
//     half a level's mean restarts it: the path got faster at that load.
//     Not for an empty path: its probes during a loss episode took the
//     episode's seconds, and the unloaded latency already says the rest;
//   - `cap` = knee x (1 + 1/kCapSlackDen) + 1, the knee being the I/Os it
//     serves without a queue, read as TCP Vegas reads a queue: over each
//     rate interval (at least one base latency), the most in flight at
//     its completions, scaled by unloaded / the interval's lowest
//     latency, smoothed; each op group's lowest against its own unloaded
//     latency, and the strongest queue any group shows (the fast op's
//     lowest would hide a queue that only the slow op, or one direction of
//     the link, has). A standing queue raises every completion's
//     latency, the lowest too, above the unloaded latency; time the I/Os
//     spend outside the path (a ublk round trip, a busy host CPU) lowers
//     the mean in flight on it but not its peak. Against `unloaded`, not
//     `base`: the base keeps a latency the path no longer has for
//     kBaseWindows ticks (in the testbed the datapath's first completions
//     come before netem adds its delay, and against that base the fast
//     path's cap stayed at 1 for 10 s), where the levels follow it; and a
//     queue shorter than the path's jitter reads as none. So a path with no
//     queue has a cap above the most it was given and grows by a quarter per
//     round trip; at the knee the lowest latency rises and the cap stops.
//     Past it (the round trip's lowest latency 1/kQueueDen above the
//     unloaded one) the cap is the knee itself, without the slack: the
//     slack's I/Os would only queue there while another path could serve
//     them (over drawn scenario families, 1-5 points more of them within
//     3 % of the best other policy, the 5th percentile up 1-3 %).
//     Before the first interval, Little's law: rate x unloaded. (From the mean
//     in flight, rate x unloaded, a path whose I/Os spend a quarter of their
//     cycle outside it, or whose jitter is a quarter of its latency with no
//     level yet measured below its knee, counted as saturated at any load.)
// The choice, among the candidates:
//   1. a candidate with nothing in flight that has not been sent an I/O
//      for kProbeBases of its unloaded latencies (at most a window), or
//      has no base yet: the probe that keeps an idle path's latency known,
//      so that a path that got better is seen. Keeping one I/O on every
//      path at all times instead would hold one of few outstanding slots
//      on a slow path for its whole latency (at 4 outstanding and a 6x
//      slower path, a quarter of the slots for a sixth of their worth).
//      The idle paths' probes together hold at most 1/kProbeBudgetDen of
//      the I/Os in flight (ProbeDue), or each waits kBaseWindows windows;
//   2. while some candidate has no completion yet, the least in-flight;
//   3. among the candidates below their cap, the least unloaded latency of
//      the I/O's op group (the most throughput per I/O), least in-flight on
//      ties: reads go where reads are fast, writes where writes are. By `base`
//      instead, a path that got slower stayed the first choice, and was
//      probed at its old latency's pace, for kBaseWindows ticks. A path
//      whose last interval showed a queue is ranked instead by when an
//      I/O sent now would complete (ExpectedDelay): below a cap read too
//      high, its next I/O only queues, and a slower idle path serves it
//      sooner and adds its whole rate. A busy path with no unloaded
//      latency of its own is ranked by at least its completions' mean,
//      jitter included (Ordered). And a path with n I/Os in flight is
//      ranked by at least what its I/Os sent at that load took this tick
//      (PathwisePath::SentLatency), where at least kLevelSamples of them
//      completed: a queue too short or too brief to show in an interval's
//      lowest latency (a link that sends one I/O at a time, held at its
//      knee by some I/Os and past it by others) still makes the next I/O
//      wait, and an idle path that serves it sooner adds its whole rate
//      (at 4 outstanding, such a link and an idle path 20 % slower: 5377
//      I/Os a second against 4199 filled to the cap);
//   4. with every candidate at its cap, the least expected delay: every
//      path is saturated, so the throughput is the same wherever the I/O
//      waits, but equal in-flight counts (queue-depth) give a path half as
//      fast a queue twice as long in time, and its I/Os the tail.
//   Rules 3 and 4 rank a path that holds I/O but has completed none of it
//   for a time (since its last completion, or since it was given I/O while
//   empty) by at least that time: on a path that delivers in order (a TCP
//   connection per queue) an I/O sent there now completes no sooner than
//   the ones it has not delivered. Its other estimates change only with
//   its completions, so a path that stopped completing (a loss episode's
//   retransmission timeouts, a target that stopped answering before the
//   path is declared down) kept them: it took I/O up to its cap, and at
//   its cap by the rate it had before (a drawn case held 293 I/Os on a
//   path in a loss episode, 0.78x the best policy; now 0.95x). The cost:
//   with one or two I/Os outstanding, a path whose lone I/O is merely slow
//   (jitter) also reads as stalled once it has been out longer than
//   another path's latency (a drawn case, two 256 KiB reads outstanding:
//   0.88x -> 0.79x). Counting the quiet time only past twice the expected
//   latency kept that case and lost the first.
//   Rule 3's expected delay and rule 4 do not look at the I/O's op group:
//   a saturated path ranked per op takes the ops it is fastest at and loses
//   the rest, and one whose link is full in one direction then serves that
//   direction only (a drawn capacity-bound case fell to 0.75x its
//   throughput).
// Latency-bound paths have no knee: everything but the probe goes to the
// fastest path. Capacity-bound ones: the fastest path is kept at its knee.
//
// A path that stays past its cap has no completion to confirm its base:
// its latency may be its own queue or a slower route. When no completion
// below its cap came for kBaseWindows ticks and its rate fell below
// 1/kDrainRateDrop of its highest over those ticks (past its knee a path
// serves at its capacity, so a falling rate means the path changed), it
// is drained, like BBR's ProbeRTT: no new I/O until it is empty, then one
// probe, whose latency is its new base. So is a busy path that was not
// empty once in kBaseWindows ticks: its unloaded latency would otherwise
// be only what its queued loads showed. One path at a time, never the
// only candidate.
//
// Every `window_ns` (Tick) each path's window of completions, usability
// and failovers also feed a scoring::HeadScorer (the agent's scoring
// library): its EWMAs, weights and health are the view a datapath exports.
// The per-I/O methods are inline so that the lab's simulator, which builds
// one copy per selector type, runs them without a call per I/O; what a
// path learns is in pathwise_path.h, the choice among paths here.
#ifndef PATHWISE_POLICY_PATHWISE_SELECTOR_H_
#define PATHWISE_POLICY_PATHWISE_SELECTOR_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "policy/path_table.h"
#include "policy/pathwise_path.h"
#include "policy/selector.h"
#include "scoring/scoring.h"

namespace pathwise::policy {

class PathwiseSelector final : public Selector, public PathwiseConstants {
 public:
  explicit PathwiseSelector(const PathwisePolicyParams& params);

  Policy policy() const override { return Policy::kPathwise; }
  void SetPaths(std::span<const PathInfo> paths) override;
  int Select(const IoRequest& io) override {
    const int g = static_cast<int>(io.op);
    int open = kNoPath;
    double open_ns = 0;
    bool unknown = false;
    // The I/Os in flight on the candidates, this one included, and the
    // candidates with none: the probes' budget (ProbeDue).
    int slots = 1, idle = 0;
    for (int i : table_.candidates()) {
      slots += table_.inflight(i);
      idle += table_.inflight(i) == 0;
    }
    for (int i : table_.candidates()) {
      const int n = table_.inflight(i);
      const PathState& p = path_[i];
      // A drained path's probe goes as soon as it is empty.
      if (n == 0 && (p.drain != 0 || ProbeDue(p, idle, slots))) return i;
      if (p.drain != 0) continue;
      if (p.base_ns == kNone) {
        unknown = true;
        continue;
      }
      if (n >= p.cap) continue;
      const double delay_ns = std::max(
          Stalled(p, n), p.queued ? PathState::ExpectedDelay(p, n)
                                  : std::max(PathState::Ordered(p, g),
                                             PathState::SentLatency(p, g, n)));
      if (open < 0 || delay_ns < open_ns ||
          (delay_ns == open_ns && n < table_.inflight(open))) {
        open = i;
        open_ns = delay_ns;
      }
    }
    if (open >= 0 && !unknown) return open;
    if (unknown) return LeastInFlightNotDraining();
    return LeastExpectedDelay();
  }
  void OnSubmit(int path, const IoRequest&, int64_t now_ns) override {
    now_ns_ = std::max(now_ns_, now_ns);
    if (table_.Has(path)) {
      if (path_[path].drain != 0 && table_.inflight(path) == 0) {
        path_[path].drain = 2;  // the probe
      }
      path_[path].last_submit_ns = now_ns;
      // Sent to an empty path: no I/O ahead of it there.
      if (table_.inflight(path) == 0) {
        path_[path].lone_out = true;
        path_[path].progress_ns = std::max(path_[path].progress_ns, now_ns);
      }
    }
    table_.Submitted(path);
  }
  void OnComplete(int path, const IoRequest& io,
                  const Completion& completion) override {
    table_.Left(path);
    now_ns_ = std::max(now_ns_, completion.now_ns);
    if (!table_.Has(path)) return;
    PathState& p = path_[path];
    p.progress_ns = std::max(p.progress_ns, completion.now_ns);
    if (!completion.ok) {
      p.lone_out = false;
      ++failovers_[path];
      if (p.drain == 2 && table_.inflight(path) == 0) p.drain = 1;
      return;
    }
    const auto lat =
        static_cast<uint64_t>(std::max<int64_t>(completion.latency_ns, 1));
    if (p.drain == 2 && table_.inflight(path) == 0) {
      // The probe, alone on the drained path: its latency is the base.
      p.RestartBase(static_cast<int>(io.op), lat);
      p.ClearLatencies();
      p.drain = 0;
    }
    if (p.lone_out) {
      // The first completion after an I/O went to the empty path: that
      // I/O's, on a path that serves in order, so a latency with no queue.
      p.lone_out = false;
      p.lone_age = 0;
      p.all.lone.Add(lat);
      p.op[static_cast<int>(io.op)].lone.Add(lat);
    }
    PathState::Learn(p, static_cast<int>(io.op), table_.inflight(path), lat,
                     completion.now_ns, io.ahead);
    scoring::OpSample& s = window_[path][static_cast<int>(io.op)];
    ++s.count;
    s.latency_sum_ns += lat;
  }
  int64_t tick_interval_ns() const override { return params_.window_ns; }
  void Tick(int64_t now_ns) override;
  int inflight(int path) const override { return table_.InflightOrZero(path); }

  // The lowest latency of `path` over the last kBaseWindows ticks, in ns
  // (0: none yet).
  uint64_t base(int path) const {
    if (!table_.Has(path)) return 0;
    const uint64_t b = path_[path].base_ns;
    return b == kNone ? 0 : b;
  }
  // Its completions per second, smoothed (0: no sample yet).
  double rate(int path) const {
    return table_.Has(path) ? path_[path].rate : 0;
  }
  // The in-flight count below which it takes I/O as an unsaturated path.
  int cap(int path) const { return table_.Has(path) ? path_[path].cap : 0; }
  // Whether `path` is being drained to re-measure its base.
  bool draining(int path) const {
    return table_.Has(path) && path_[path].drain != 0;
  }
  // The weight the scoring library gives `path` in `op` (0..kMaxWeight),
  // as of the last tick; before it, the usable paths share 64 equally.
  uint32_t weight(model::OpGroup op, int path) const {
    return table_.Has(path) ? weight_[static_cast<int>(op)][path] : 0;
  }
  // The scorer's view (EWMAs, health), keyed by the path's index as text.
  const scoring::HeadScorer& scorer() const { return scorer_; }

 private:
  using PathState = PathwisePath;
  using LoadLevel = PathwisePath::LoadLevel;
  using Latencies = PathwisePath::Latencies;
  static constexpr int kGroups = PathwisePath::kGroups;
  static constexpr uint64_t kNone = PathwisePath::kNone;

  // Whether an idle path is due its probe (rule 1): it has no base yet, or
  // its last I/O went out kProbeBases of its unloaded latencies ago, or a
  // window ago if that is sooner (the scorer then has a sample of it in
  // every window or so, and one very slow completion does not keep a path
  // that recovered unprobed for long). But never so often that the `idle`
  // paths' probes together hold more than 1 / kProbeBudgetDen of the
  // `slots` (the I/Os in flight): each probe holds a slot for the path's
  // unloaded latency. With few I/Os outstanding and several slow paths the
  // per-path pace alone gave the probes a sixth of the only slots there
  // were (at 2 outstanding and six paths 2-24x slower than the best, 17 %
  // of the throughput).
  bool ProbeDue(const PathState& p, int idle, int slots) const {
    if (p.base_ns == kNone || p.last_submit_ns < 0) return true;
    const auto window =
        static_cast<uint64_t>(std::max<int64_t>(params_.window_ns, 0));
    const double unloaded_ns = PathState::Unloaded(p);
    const double gap = std::max(
        std::min(unloaded_ns * kProbeBases, static_cast<double>(window)),
        std::min(static_cast<double>(p.base_ns) * kProbeBudgetDen * idle /
                     std::max(slots, 1),
                 static_cast<double>(window) * kBaseWindows));
    return static_cast<double>(now_ns_ - p.last_submit_ns) >= gap;
  }

  // How long `p`, with `n` in flight, has completed nothing: on a path
  // that delivers in order, an I/O sent there now waits at least that long
  // behind them. (Its progress only moves forward: a datapath's queues may
  // report times a little out of order.)
  double Stalled(const PathState& p, int n) const {
    return n > 0 && p.progress_ns >= 0
               ? static_cast<double>(now_ns_ - p.progress_ns)
               : 0;
  }

  int LeastInFlightNotDraining() const {
    int best = kNoPath;
    for (int i : table_.candidates()) {
      if (path_[i].drain != 0) continue;
      if (best < 0 || table_.inflight(i) < table_.inflight(best)) best = i;
    }
    return best >= 0 ? best : table_.LeastInFlight();
  }

  int LeastExpectedDelay() const {
    int best = kNoPath;
    double best_ns = 0;
    for (int i : table_.candidates()) {
      const PathState& p = path_[i];
      if (p.drain != 0) continue;
      const int n = table_.inflight(i);
      const double ns = std::max(Stalled(p, n), PathState::ExpectedDelay(p, n));
      if (best < 0 || ns < best_ns) {
        best = i;
        best_ns = ns;
      }
    }
    return best >= 0 ? best : table_.LeastInFlight();
  }

  void StartDrain();
  void Reset();

  PathwisePolicyParams params_;
  PathTable table_;
  std::vector<PathState> path_;
  int next_drain_ = 0;  // where the next search for a stale base starts
  int64_t now_ns_ = 0;  // the latest submission or completion time seen
  scoring::HeadScorer scorer_;
  std::array<std::vector<uint32_t>, kGroups> weight_;  // [group][path]
  // This window's completions and failovers, per path.
  std::vector<std::array<scoring::OpSample, kGroups>> window_;
  std::vector<uint64_t> failovers_;
};

}  // namespace pathwise::policy

#endif  // PATHWISE_POLICY_PATHWISE_SELECTOR_H_

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
//      jitter included (Ordered);
//   4. with every candidate at its cap, the least expected delay: every
//      path is saturated, so the throughput is the same wherever the I/O
//      waits, but equal in-flight counts (queue-depth) give a path half as
//      fast a queue twice as long in time, and its I/Os the tail.
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
// The file is long on purpose: the per-I/O methods are inline so that the
// lab's simulator, which builds one copy per selector type, runs them
// without a call per I/O, and the rules above are the selector's spec.
#ifndef PATHWISE_POLICY_PATHWISE_SELECTOR_H_
#define PATHWISE_POLICY_PATHWISE_SELECTOR_H_

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "policy/path_table.h"
#include "policy/selector.h"
#include "scoring/scoring.h"

namespace pathwise::policy {

class PathwiseSelector final : public Selector {
 public:
  // Ticks a path's lowest latency is remembered for: long enough to span
  // the load swings the selector itself causes, short enough that a path
  // whose latency went up for good (a longer route) is seen as such.
  static constexpr int kBaseWindows = 10;
  // The cap's room to grow: 1 / kCapSlackDen of the I/Os in service.
  static constexpr int kCapSlackDen = 4;
  // The rate's smoothing: 1 / kRateSmoothDen of each new sample.
  static constexpr int kRateSmoothDen = 4;
  // An interval whose lowest latency is 1/kQueueDen above the unloaded
  // latency shows a queue.
  static constexpr int kQueueDen = 20;

  // A path past its cap for kBaseWindows ticks is drained to re-measure
  // its base when its rate fell below 1/kDrainRateDrop of its highest at
  // the last kBaseWindows ticks.
  static constexpr double kDrainRateDrop = 2;
  // Load levels (in-flight counts 1, 2-3, 4-7, ...) with a mean latency
  // each, and the completions a level needs before it counts.
  static constexpr int kLoadLevels = 24;
  static constexpr int kLevelSamples = 16;
  // The levels' running means: 1 / kLevelSmoothDen of each completion.
  static constexpr int kLevelSmoothDen = 8;
  // Completions of I/Os sent to the empty path before their mean counts.
  static constexpr int kLoneSamples = 1;
  // An idle path is probed once per kProbeBases of its unloaded latencies:
  // a slow path then holds one I/O for 1 / (kProbeBases + 1) of the time.
  static constexpr int kProbeBases = 16;
  // The idle paths' probes together hold at most 1 / kProbeBudgetDen of
  // the I/Os in flight.
  static constexpr int kProbeBudgetDen = 64;

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
      const double delay_ns = p.queued ? ExpectedDelay(p, n) : Ordered(p, g);
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
      if (table_.inflight(path) == 0) path_[path].lone_out = true;
    }
    table_.Submitted(path);
  }
  void OnComplete(int path, const IoRequest& io,
                  const Completion& completion) override {
    table_.Left(path);
    now_ns_ = std::max(now_ns_, completion.now_ns);
    if (!table_.Has(path)) return;
    PathState& p = path_[path];
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
    Learn(p, static_cast<int>(io.op), table_.inflight(path), lat,
          completion.now_ns);
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
  static constexpr int kGroups = model::kOpGroupCount;
  static constexpr uint64_t kNone = std::numeric_limits<uint64_t>::max();

  // Completions that left a path with in-flight counts in one power-of-two
  // range, and their running mean latency.
  struct LoadLevel {
    double mean_ns = 0;
    int count = 0;  // up to kLevelSamples
    // The plain mean of the first kLevelSamples, then 1/kLevelSmoothDen
    // of each new one.
    void Add(uint64_t lat) {
      const auto l = static_cast<double>(lat);
      if (count < kLevelSamples) {
        ++count;
        mean_ns += (l - mean_ns) / count;
      } else {
        mean_ns += (l - mean_ns) / kLevelSmoothDen;
      }
    }
  };
  // The load levels' means, and the latencies of I/Os sent to the empty
  // path (see Unloaded).
  struct Latencies {
    std::array<LoadLevel, kLoadLevels> levels{};
    LoadLevel lone;
    // Completions at loads above the levels' (the path held busy) while
    // its last interval showed no queue: its latency with its jitter,
    // which the base leaves out (see Ordered).
    LoadLevel held;
    bool known() const {
      if (lone.count >= kLoneSamples) return true;
      for (const LoadLevel& level : levels) {
        if (level.count >= kLevelSamples) return true;
      }
      return false;
    }
  };
  struct PathState {
    void ClearLatencies() {
      all = Latencies{};
      op.fill(Latencies{});
    }
    // Forgets every lowest latency (base and per op group) but `lat`, the
    // probe's, of op group g.
    void RestartBase(int g, uint64_t lat) {
      mins.fill(kNone);
      for (auto& m : op_mins) m.fill(kNone);
      op_window_min_ns.fill(kNone);
      op_base_ns.fill(kNone);
      window_min_ns = base_ns = lat;
      op_window_min_ns[g] = op_base_ns[g] = lat;
    }
    uint64_t base_ns = kNone;        // min over the ring and this window
    uint64_t window_min_ns = kNone;  // this tick's lowest latency
    std::array<uint64_t, kBaseWindows> mins{};  // past ticks' lowest
    // The same per op group: an op slower than the path's base (its
    // fastest op's) is compared with its own until it has an unloaded
    // latency of its own.
    std::array<uint64_t, kGroups> op_base_ns{kNone, kNone, kNone};
    std::array<uint64_t, kGroups> op_window_min_ns{kNone, kNone, kNone};
    std::array<std::array<uint64_t, kBaseWindows>, kGroups> op_mins{};
    std::array<double, kBaseWindows> rates{};  // the rate at past ticks
    int next = 0;                              // ring position
    double rate = 0;                           // completions per second
    int64_t rate_start_ns = -1;  // the current rate interval's start
    int64_t rate_count = 0;      // completions in it
    // The interval's lowest latency per op group.
    std::array<uint64_t, kGroups> interval_min_ns{kNone, kNone, kNone};
    int interval_peak = 0;  // the most in flight at its completions
    // I/Os the path serves without a queue (its knee), from the intervals'
    // peaks and lowest latencies, smoothed; -1: no interval yet.
    double in_service = -1;
    int cap = 1;
    // The last interval's lowest latency showed a queue: the path is at
    // its knee, and the cap holds there rather than probing past it.
    bool queued = false;
    // Refreshing a base no completion has confirmed for kBaseWindows
    // ticks: 1 draining (no new I/O), 2 the probe sent to the empty path.
    int drain = 0;
    // Every op's latencies, and each op group's: a path can serve reads
    // and writes at different latencies (a write cache, a link busy in one
    // direction), and the mix's mean says neither.
    Latencies all;
    std::array<Latencies, kGroups> op;
    // An I/O sent to the empty path is out; the ticks since the last such
    // completion (the `lone` means count for kBaseWindows ticks).
    bool lone_out = false;
    int lone_age = 0;
    int64_t last_submit_ns = -1;  // when it was last sent an I/O
  };

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
    const double unloaded_ns = Unloaded(p);
    const double gap = std::max(
        std::min(unloaded_ns * kProbeBases, static_cast<double>(window)),
        std::min(static_cast<double>(p.base_ns) * kProbeBudgetDen * idle /
                     std::max(slots, 1),
                 static_cast<double>(window) * kBaseWindows));
    return static_cast<double>(now_ns_ - p.last_submit_ns) >= gap;
  }

  int LeastInFlightNotDraining() const {
    int best = kNoPath;
    for (int i : table_.candidates()) {
      if (path_[i].drain != 0) continue;
      if (best < 0 || table_.inflight(i) < table_.inflight(best)) best = i;
    }
    return best >= 0 ? best : table_.LeastInFlight();
  }

  // With every candidate at its cap (rule 4), the one where an I/O sent now
  // is expected to complete first: a saturated path serves at its rate, so
  // the I/O waits for the n in flight before it, (n + 1) / rate, and never
  // less than the path's unloaded latency. Equal in-flight counts instead
  // (queue-depth) give a path half as fast a queue twice as long in time:
  // the same throughput, since every path stays busy, but its I/Os are the
  // tail. The capacity is at least the knee's worth of I/Os per unloaded
  // latency (Little's law), so a path whose rate lags its load is not
  // shunned.
  static double ExpectedDelay(const PathState& p, int inflight) {
    const double unloaded_ns = Unloaded(p);
    const double per_s =
        std::max(p.rate, std::max(p.in_service, 1.0) * 1e9 / unloaded_ns);
    return std::max(unloaded_ns, (inflight + 1) * 1e9 / per_s);
  }
  int LeastExpectedDelay() const {
    int best = kNoPath;
    double best_ns = 0;
    for (int i : table_.candidates()) {
      const PathState& p = path_[i];
      if (p.drain != 0) continue;
      const double ns = ExpectedDelay(p, table_.inflight(i));
      if (best < 0 || ns < best_ns) {
        best = i;
        best_ns = ns;
      }
    }
    return best >= 0 ? best : table_.LeastInFlight();
  }

  // A completion of `lat` ns at `now_ns` on `p`, leaving `inflight` there.
  void Learn(PathState& p, int g, int inflight, uint64_t lat, int64_t now_ns) {
    // A completion in under half the path's unloaded latency is no jitter
    // of it: the path got faster (a shorter route, a target that
    // recovered). Its levels start afresh, so that it is ordered by its new
    // latency at once, not after the many completions (often only probes)
    // its old means would take to come down.
    if (static_cast<double>(lat) * 2 < Unloaded(p, g)) p.ClearLatencies();
    // Only loads below the cap the base alone gives count: that cap never
    // lets a path past its knee, so no level's mean holds more than its
    // slack of queueing, and the levels cannot raise the cap that admits
    // their own samples.
    if (p.base_ns != kNone &&
        inflight < p.rate * static_cast<double>(p.base_ns) / 1e9) {
      const int level =
          std::min<int>(std::bit_width(static_cast<unsigned>(inflight + 1)) - 1,
                        kLoadLevels - 1);
      p.all.levels[level].Add(lat);
      p.op[g].levels[level].Add(lat);
    } else if (p.base_ns != kNone && !p.queued) {
      p.all.held.Add(lat);
      p.op[g].held.Add(lat);
    }
    if (inflight < p.cap || p.base_ns == kNone) {
      p.window_min_ns = std::min(p.window_min_ns, lat);
      p.op_window_min_ns[g] = std::min(p.op_window_min_ns[g], lat);
      p.op_base_ns[g] = std::min(p.op_base_ns[g], lat);
      if (lat < p.base_ns) {
        p.base_ns = lat;
        UpdateCap(p);
      }
    }
    if (p.rate_start_ns < 0) {
      p.rate_start_ns = now_ns;
      return;
    }
    ++p.rate_count;
    p.interval_min_ns[g] = std::min(p.interval_min_ns[g], lat);
    p.interval_peak = std::max(p.interval_peak, inflight + 1);
    const int64_t span = now_ns - p.rate_start_ns;
    if (span <= 0 || static_cast<uint64_t>(span) < p.base_ns) return;
    const double sample =
        static_cast<double>(p.rate_count) * 1e9 / static_cast<double>(span);
    p.rate = p.rate == 0 ? sample : p.rate + (sample - p.rate) / kRateSmoothDen;
    // The strongest queue any op group showed: each against its own
    // unloaded latency, or a fast op's lowest would hide a queue.
    double over = 0;
    for (int i = 0; i < kGroups; ++i) {
      if (p.interval_min_ns[i] != kNone) {
        over = std::max(
            over, static_cast<double>(p.interval_min_ns[i]) / Unloaded(p, i));
      }
    }
    if (p.base_ns != kNone && over > 0) {
      // TCP Vegas' reading of a queue: the interval's lowest latency over
      // the latency without one (here `unloaded`, which follows a path
      // that changed, where the base keeps the old minimum). A standing
      // queue raises every completion's latency, the lowest too. The most
      // in flight that had no queue is then the interval's peak scaled by
      // unloaded / lowest.
      const double k = p.interval_peak / over;
      p.queued = over > 1 + 1.0 / kQueueDen;
      p.in_service = p.in_service < 0
                         ? k
                         : p.in_service + (k - p.in_service) / kRateSmoothDen;
    }
    p.interval_min_ns.fill(kNone);
    p.interval_peak = 0;
    p.rate_start_ns = now_ns;
    p.rate_count = 0;
    UpdateCap(p);
  }
  static void UpdateCap(PathState& p) {
    if (p.base_ns == kNone) return;
    // Until its first interval, Little's law on its rate and latency.
    const double in_service =
        p.in_service >= 0 ? p.in_service : p.rate * Unloaded(p) / 1e9;
    p.cap = static_cast<int>(
        std::min(p.queued ? std::ceil(in_service)
                          : in_service * (kCapSlackDen + 1) / kCapSlackDen + 1,
                 1e9));
  }
  // The mean latency of the least loaded level with kLevelSamples
  // completions, at least the base; the base until a level has them.
  // An op group with no unloaded latency of its own yet (a busy path
  // seldom measures one alone) takes the path's, but never below the op's
  // own lowest latency: against the path's base (its fastest op's) every
  // completion of a slower op read as a queue.
  static double Unloaded(const PathState& p, int g) {
    if (p.op[g].known()) return Unloaded(p, p.op[g]);
    const double all = Unloaded(p, p.all);
    return p.op_base_ns[g] == kNone
               ? all
               : std::max(all, static_cast<double>(p.op_base_ns[g]));
  }
  static double Unloaded(const PathState& p) { return Unloaded(p, p.all); }
  // What an I/O of op group g is expected to take on a path that shows no
  // queue, to order the paths below their caps: its unloaded latency, but
  // on a path held busy, with no level of kLevelSamples completions nor as
  // many lone ones (its unloaded latency is then its lowest, or one lone
  // I/O's), at least the mean of its completions held there. A jittery
  // path's mean is well above its lowest: by its lowest, a path serving
  // in 5 or 25 ms kept every I/O from one serving in 12.
  static double Ordered(const PathState& p, int g) {
    const double u = Unloaded(p, g);
    const Latencies& l = p.op[g].known() ? p.op[g] : p.all;
    if (l.held.count < kLevelSamples || l.lone.count >= kLevelSamples) {
      return u;
    }
    for (const LoadLevel& level : l.levels) {
      if (level.count >= kLevelSamples) return u;
    }
    return std::max(u, l.held.mean_ns);
  }
  static double Unloaded(const PathState& p, const Latencies& l) {
    const auto base = static_cast<double>(p.base_ns);
    double unloaded = base;
    for (const LoadLevel& level : l.levels) {
      if (level.count >= kLevelSamples) {
        unloaded = std::max(base, level.mean_ns);
        break;
      }
    }
    if (l.lone.count >= kLoneSamples) {
      unloaded = std::min(unloaded, std::max(base, l.lone.mean_ns));
    }
    return unloaded;
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

// SPDX-License-Identifier: Apache-2.0
// One path as PathwiseSelector sees it (pathwise_selector.h, whose comment
// is the spec): what the path learns from its own completions (its base,
// rate, load levels, knee and cap, whether it shows a queue) and the
// latencies the selector orders paths by. The selector's header holds the
// choice among paths, this one the learning; both are inline, as the lab's
// simulator runs them for every I/O.
#ifndef PATHWISE_POLICY_PATHWISE_PATH_H_
#define PATHWISE_POLICY_PATHWISE_PATH_H_

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "model/types.h"

namespace pathwise::policy {

// The selector's constants (PathwiseSelector has them as its own).
struct PathwiseConstants {
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
};

// One path's state, and the selector's arithmetic on it.
struct PathwisePath : PathwiseConstants {
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
    // Latency by the I/Os already in flight on the path when an I/O was
    // sent (1, 2, 3, 4-7, 8-15, ...; see SentLatency): what one more I/O
    // costs there. Forgotten every tick.
    std::array<LoadLevel, kLoadLevels> sent{};
    bool known() const {
      if (lone.count >= kLoneSamples) return true;
      for (const LoadLevel& level : levels) {
        if (level.count >= kLevelSamples) return true;
      }
      return false;
    }
  };
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
  // Its last completion, or the submission that found it empty: with I/O
  // in flight and none completed since, the path has stalled that long.
  int64_t progress_ns = -1;

  // With every candidate at its cap (rule 4), the one where an I/O sent now
  // is expected to complete first: a saturated path serves at its rate, so
  // the I/O waits for the n in flight before it, (n + 1) / rate, and never
  // less than the path's unloaded latency. Equal in-flight counts instead
  // (queue-depth) give a path half as fast a queue twice as long in time:
  // the same throughput, since every path stays busy, but its I/Os are the
  // tail. The capacity is at least the knee's worth of I/Os per unloaded
  // latency (Little's law), so a path whose rate lags its load is not
  // shunned.
  static double ExpectedDelay(const PathwisePath& p, int inflight) {
    const double unloaded_ns = Unloaded(p);
    const double per_s =
        std::max(p.rate, std::max(p.in_service, 1.0) * 1e9 / unloaded_ns);
    return std::max(unloaded_ns, (inflight + 1) * 1e9 / per_s);
  }
  // The `sent` level of an I/O sent with `ahead` already in flight (>= 1).
  static int SentLevel(int ahead) {
    return ahead < 4
               ? ahead
               : std::min<int>(std::bit_width(static_cast<unsigned>(ahead)) + 1,
                               kLoadLevels - 1);
  }
  // The mean latency, this tick, of op group g's I/Os sent to `p` with
  // `ahead` already in flight; 0 while fewer than kLevelSamples completed,
  // and for an empty path (its unloaded latency says it: its probes in a
  // loss episode took the episode's seconds).
  static double SentLatency(const PathwisePath& p, int g, int ahead) {
    if (ahead < 1) return 0;
    const Latencies& l = p.op[g].known() ? p.op[g] : p.all;
    const LoadLevel& s = l.sent[SentLevel(ahead)];
    return s.count >= kLevelSamples ? s.mean_ns : 0;
  }
  // A completion of `lat` ns at `now_ns` on `p`, leaving `inflight` there;
  // `ahead` in flight there when it was sent (-1 unknown).
  static void Learn(PathwisePath& p, int g, int inflight, uint64_t lat,
                    int64_t now_ns, int ahead = -1) {
    if (ahead >= 1) {
      const int s = SentLevel(ahead);
      for (Latencies* l : {&p.all, &p.op[g]}) {
        LoadLevel& level = l->sent[s];
        // Under half the level's mean: the path got faster at this load.
        if (level.count > 0 && static_cast<double>(lat) * 2 < level.mean_ns) {
          level = LoadLevel{};
        }
        level.Add(lat);
      }
    }
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
  static void UpdateCap(PathwisePath& p) {
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
  static double Unloaded(const PathwisePath& p, int g) {
    if (p.op[g].known()) return Unloaded(p, p.op[g]);
    const double all = Unloaded(p, p.all);
    return p.op_base_ns[g] == kNone
               ? all
               : std::max(all, static_cast<double>(p.op_base_ns[g]));
  }
  static double Unloaded(const PathwisePath& p) { return Unloaded(p, p.all); }
  // What an I/O of op group g is expected to take on a path that shows no
  // queue, to order the paths below their caps: its unloaded latency, but
  // on a path held busy, with no level of kLevelSamples completions nor as
  // many lone ones (its unloaded latency is then its lowest, or one lone
  // I/O's), at least the mean of its completions held there. A jittery
  // path's mean is well above its lowest: by its lowest, a path serving
  // in 5 or 25 ms kept every I/O from one serving in 12.
  static double Ordered(const PathwisePath& p, int g) {
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
  static double Unloaded(const PathwisePath& p, const Latencies& l) {
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
};

}  // namespace pathwise::policy

#endif  // PATHWISE_POLICY_PATHWISE_PATH_H_

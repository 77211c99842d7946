// SPDX-License-Identifier: Apache-2.0
// Path scoring: per-path latency EWMA, weights, health and an iopolicy
// advisor. Pure logic: no I/O, no clock, no globals. The agent feeds it once
// per collection window; `pathwise lab`'s "pathwise" policy feeds it once per
// simulated window. Both use this code, not a copy.
//
// The maths follow the proposed kernel "latency" iopolicy (per-path EWMA of
// completion latency, weights inversely proportional to it):
//
//   EWMA (per path, per op group, integer nanoseconds):
//     window mean  m = latency_sum_ns / count           (count > 0)
//     first sample   ewma = m
//     later          ewma = (ewma * ((1 << shift) - 1) + m) >> shift
//     no samples     ewma unchanged; the path's sample age grows by one window
//     step           if reseed_ratio > 0, count >= reseed_min_samples and
//                    m >= reseed_ratio x ewma or m x reseed_ratio <= ewma:
//                    a possible regime change. A step up takes effect at
//                    once (ewma = m), a step down does not (ewma = the plain
//                    step): bad news fast, good news once it persists. The
//                    next window with samples decides: if its mean is again
//                    >= ratio x (or <= 1/ratio x) the pre-step EWMA, the
//                    step persisted and ewma = that mean (the first whole
//                    window of the new regime; the step window was likely
//                    mixed); otherwise it was noise and ewma = the plain
//                    EWMA over both windows, as if there had been no step.
//   score  = 1e9 / ewma_ns                              (a rate: "I/Os per s")
//   weight = floor(score * 64 / sum of scores of the head's usable paths),
//            at least 1 for a usable path (every path is still probed),
//            0 for a path that is not usable.
//   A usable path with no EWMA yet in an op group is scored like the best
//   known sibling (optimistic: it gets traffic, so it gets measured). With no
//   EWMA at all in the group, the usable paths share 64 equally.
//
// Health (per path, evaluated at the end of each window, in this order):
//   failed    the path is not usable (see IsUsable: ANA inaccessible,
//             persistent-loss or change, or its controller is not live).
//   degraded  (a) in some op group its EWMA >= degraded_ratio x the best
//             usable sibling's EWMA for degraded_windows consecutive windows
//             (a group the path has not sampled for idle_windows windows
//             no longer counts, here or in the head's imbalance),
//             or (b) failovers or path errors occurred in this window.
//             Once degraded (or failed), a path stays degraded until
//             recover_windows consecutive clean windows (usable, neither (a)'s
//             condition nor (b)) have passed. This is the hysteresis: a path
//             alternating good and bad windows stays degraded.
//   idle      usable, not degraded, and no samples for idle_windows windows.
//   healthy   otherwise.
//
// Advisor (per subsystem; see Advise() and docs/scoring.md):
//   1. No head with two usable paths, or no latency evidence yet: keep the
//      current iopolicy (numa if unknown): there is nothing to balance.
//   2. Asymmetric (some head has a degraded usable path, or a latency
//      imbalance >= asymmetric_ratio in some op group): queue-depth if the
//      kernel has it (Linux >= 6.11), else round-robin (it halves the damage
//      of a slow path that numa might pin every CPU to).
//   3. Symmetric: numa when the paths sit on more than one NUMA node (it
//      keeps I/O local), else round-robin.
//   In short: round-robin is for symmetric paths, queue-depth for
//   asymmetric ones.
#ifndef PATHWISE_SCORING_SCORING_H_
#define PATHWISE_SCORING_SCORING_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/topology.h"
#include "model/types.h"

namespace pathwise::scoring {

inline constexpr uint32_t kMaxWeight = 64;

struct Config {
  int ewma_shift = 3;           // 7/8 old, 1/8 new
  double degraded_ratio = 3.0;  // EWMA vs best usable sibling
  int degraded_windows = 2;     // consecutive windows over the ratio
  int idle_windows = 10;        // windows without samples -> idle
  int recover_windows = 5;      // clean windows to leave degraded/failed
  // Step detection (see docs/scoring.md): a window whose mean differs from
  // the EWMA by at least this factor, either way, over at least
  // reseed_min_samples I/Os, re-initialises the EWMA to that mean, so a
  // path that became much slower or much faster is seen in one window
  // instead of ~20; if the next window does not confirm the step, the plain
  // EWMA is restored. 0 turns it off (the kernel proposal's plain EWMA).
  double reseed_ratio = 3.0;
  uint64_t reseed_min_samples = 16;
  // Advisor: a head whose worst/best usable EWMA reaches this is asymmetric.
  double asymmetric_ratio = 1.5;
};

// One op group's successful I/Os in one window.
struct OpSample {
  uint64_t count = 0;
  uint64_t latency_sum_ns = 0;
};

// What the caller observed for one path during one window.
struct PathWindow {
  std::string path;  // key, e.g. nvme0c1n1
  std::array<OpSample, model::kOpGroupCount> ops;
  bool usable = true;      // see IsUsable()
  uint64_t failovers = 0;  // in this window
  uint64_t errors = 0;     // path errors in this window
  int numa_node = -1;      // for the advisor; -1 unknown
};

// A path is usable when its controller is live and its ANA state allows I/O:
// optimized or non-optimized, as the kernel's path selectors require. An
// unreported state (kUnknown) does not count against it: a controller
// without ANA has no ana_state, and an unknown controller state "" is taken
// as live.
bool IsUsable(model::AnaState ana_state,
              model::ControllerState controller_state);

// The rule every caller uses on the model: IsUsable, except that a state the
// kernel reported but the model does not know (a newer kernel's, or garbage)
// makes the path unusable: only the states the kernel's selectors send I/O
// in are trusted. `controller` may be null (not in the topology).
bool IsUsable(const model::Path& path, const model::Controller* controller);

// The EWMA step, exposed for tests: returns the new EWMA.
uint64_t EwmaStep(uint64_t old_ewma, uint64_t sample, int shift);

// One op group's EWMA, with the step detector's memory.
struct EwmaState {
  std::optional<uint64_t> value;  // the EWMA (nullopt: no sample yet)
  // Set by a step window until the next window with samples decides it:
  // the direction (+1 up, -1 down), the EWMA before the step, and the plain
  // EWMA including the step window (what `value` reverts to, advanced by the
  // next window, if the step does not persist).
  int step = 0;
  uint64_t pre_step = 0;
  uint64_t plain = 0;
};

// One window's update of an op group's EWMA with its window mean `mean` over
// `count` I/Os (count > 0): the first sample initialises it, a step (see
// Config::reseed_ratio and the header comment) re-initialises it pending
// confirmation by the next window, else EwmaStep.
void UpdateEwma(EwmaState& state, uint64_t mean, uint64_t count,
                const Config& config);

// Weights for a set of paths of one head in one op group. `ewma[i]` is
// nullopt when path i has no EWMA; `usable[i]` false gives weight 0.
std::vector<uint32_t> ComputeWeights(
    const std::vector<std::optional<uint64_t>>& ewma,
    const std::vector<bool>& usable);

struct PathScore {
  std::string path;
  bool usable = true;
  model::PathHealth health = model::PathHealth::kHealthy;
  int numa_node = -1;
  std::array<std::optional<uint64_t>, model::kOpGroupCount> ewma_ns;
  std::array<EwmaState, model::kOpGroupCount>
      ewma_state;  // ewma_ns's step memory
  std::array<uint32_t, model::kOpGroupCount> weight = {0, 0, 0};
  // 100 x best usable sibling's EWMA / this EWMA (100 = the best path);
  // nullopt without an EWMA or without a usable sibling with one.
  std::array<std::optional<double>, model::kOpGroupCount> score;
  // Windows since the last sample, per op group (nullopt: never sampled),
  // and over all groups.
  std::array<std::optional<uint64_t>, model::kOpGroupCount> age_windows;
  std::optional<uint64_t> sample_age_windows;

  // Hysteresis bookkeeping.
  int bad_streak = 0;    // consecutive windows over the ratio
  int clean_streak = 0;  // consecutive clean windows
};

struct HeadSummary {
  std::array<int, model::kPathHealthCount> paths_by_state = {0, 0, 0, 0};
  // Worst usable EWMA / best usable EWMA per op group (nullopt with fewer
  // than two usable paths that have an EWMA), and the largest of them.
  std::array<std::optional<double>, model::kOpGroupCount> imbalance;
  std::optional<double> imbalance_ratio;
  int usable_paths = 0;
};

// The scoring state of one multipath head. Feed Update() once per window
// with every path of the head; paths not listed are forgotten.
class HeadScorer {
 public:
  explicit HeadScorer(Config config = {}) : config_(config) {}

  void Update(const std::vector<PathWindow>& window);

  const std::vector<PathScore>& paths() const { return paths_; }
  const PathScore* Find(std::string_view path) const;
  HeadSummary Summary() const;
  uint64_t windows() const { return windows_; }
  const Config& config() const { return config_; }

 private:
  Config config_;
  std::vector<PathScore> paths_;  // in the caller's order
  uint64_t windows_ = 0;
};

// What the exporters publish of one path's score (model::PathScoring):
// EWMAs in seconds, the weights, the lowest score over op groups and the
// sample age, one window being `window_seconds` long.
model::PathScoring ToModel(const PathScore& ps, double window_seconds);
// ... and of a head's summary.
model::HeadScoring ToModel(const HeadSummary& summary);

struct AdvisorInput {
  // kUnknown: not reported (the kernel's default, numa, is in force) or,
  // with current_is_foreign, a policy the kernel reported that pathwise
  // does not know.
  model::Iopolicy current_iopolicy = model::Iopolicy::kUnknown;
  bool current_is_foreign = false;
  bool kernel_has_queue_depth = true;
  std::vector<const HeadScorer*> heads;
};

struct Advice {
  // One of model::kAdvisedIopolicies, or kUnknown: keep the current policy,
  // which the kernel reported but pathwise does not know.
  model::Iopolicy iopolicy = model::Iopolicy::kNuma;
  std::string reason;  // one line
};

Advice Advise(const AdvisorInput& input, const Config& config = {});

}  // namespace pathwise::scoring

#endif  // PATHWISE_SCORING_SCORING_H_

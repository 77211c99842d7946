// SPDX-License-Identifier: Apache-2.0
#include "scoring/scoring.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <unordered_map>

namespace pathwise::scoring {

bool IsUsable(model::AnaState ana_state,
              model::ControllerState controller_state) {
  const bool live = controller_state == model::ControllerState::kUnknown ||
                    controller_state == model::ControllerState::kLive;
  return live && model::AnaAllowsIo(ana_state);
}

bool IsUsable(const model::Path& path, const model::Controller* controller) {
  if (!path.unknown_ana_state.empty()) return false;
  if (controller != nullptr && !controller->unknown_state.empty()) {
    return false;
  }
  return IsUsable(path.ana_state, controller == nullptr
                                      ? model::ControllerState::kUnknown
                                      : controller->state);
}

uint64_t EwmaStep(uint64_t old_ewma, uint64_t sample, int shift) {
  // unsigned __int128 keeps old * (2^shift - 1) exact for any shift <= 63.
  const unsigned __int128 mult =
      (static_cast<unsigned __int128>(1) << shift) - 1;
  const unsigned __int128 sum =
      static_cast<unsigned __int128>(old_ewma) * mult +
      static_cast<unsigned __int128>(sample);
  return static_cast<uint64_t>(sum >> shift);
}

void UpdateEwma(EwmaState& state, uint64_t mean, uint64_t count,
                const Config& config) {
  if (!state.value.has_value()) {
    state = EwmaState{.value = mean};
    return;
  }
  const bool judge =
      config.reseed_ratio > 0 && count >= config.reseed_min_samples;
  const double m = static_cast<double>(mean);
  const double r = config.reseed_ratio;
  if (state.step != 0) {
    // The window after a step decides it.
    const double pre = static_cast<double>(state.pre_step);
    const bool persisted =
        judge && (state.step > 0 ? m >= r * pre : m * r <= pre);
    state.value =
        persisted ? mean : EwmaStep(state.plain, mean, config.ewma_shift);
    state.step = 0;
    return;
  }
  const uint64_t plain = EwmaStep(*state.value, mean, config.ewma_shift);
  const double e = static_cast<double>(*state.value);
  if (judge && (m >= r * e || m * r <= e)) {
    // Bad news at once, good news once it persists: a step up takes
    // effect now (weights move away from a path that became slow within
    // the window), a step down only when the next window confirms it (a
    // lossy path's one clean window does not win its weight back).
    state.step = m >= r * e ? 1 : -1;
    state.pre_step = *state.value;
    state.plain = plain;
    state.value = state.step > 0 ? mean : plain;
    return;
  }
  state.value = plain;
}

std::vector<uint32_t> ComputeWeights(
    const std::vector<std::optional<uint64_t>>& ewma,
    const std::vector<bool>& usable) {
  const size_t n = ewma.size();
  std::vector<uint32_t> weights(n, 0);
  std::vector<double> scores(n, 0.0);
  double best = 0;
  int usable_count = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!usable[i]) continue;
    ++usable_count;
    if (ewma[i].has_value()) {
      scores[i] = 1e9 / static_cast<double>(std::max<uint64_t>(*ewma[i], 1));
      best = std::max(best, scores[i]);
    }
  }
  if (usable_count == 0) return weights;
  if (best == 0) {  // no evidence: share equally
    for (size_t i = 0; i < n; ++i) {
      if (usable[i]) {
        weights[i] = std::max<uint32_t>(kMaxWeight / usable_count, 1);
      }
    }
    return weights;
  }
  double total = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!usable[i]) continue;
    if (!ewma[i].has_value()) scores[i] = best;  // optimistic: probe it
    total += scores[i];
  }
  for (size_t i = 0; i < n; ++i) {
    if (!usable[i]) continue;
    const auto w = static_cast<uint32_t>(scores[i] * kMaxWeight / total);
    weights[i] = std::max<uint32_t>(w, 1);
  }
  return weights;
}

namespace {

using BestEwma = std::array<std::optional<uint64_t>, model::kOpGroupCount>;

// EWMAs: carries each path's state over by name (paths that vanished are
// dropped, new ones start empty), folds this window's mean into each op
// group's EWMA, and ages the groups and paths without samples.
std::vector<PathScore> UpdateEwmas(std::vector<PathScore>& paths,
                                   const std::vector<PathWindow>& window,
                                   const Config& config) {
  std::unordered_map<std::string, PathScore> old;
  for (PathScore& p : paths) old.emplace(p.path, std::move(p));
  std::vector<PathScore> next;
  next.reserve(window.size());
  for (const PathWindow& w : window) {
    PathScore p;
    if (auto it = old.find(w.path); it != old.end()) {
      p = std::move(it->second);
    } else {
      p.path = w.path;
    }
    p.usable = w.usable;
    p.numa_node = w.numa_node;
    bool any_sample = false;
    for (int g = 0; g < model::kOpGroupCount; ++g) {
      const OpSample& s = w.ops[g];
      if (s.count > 0) {
        const uint64_t mean = s.latency_sum_ns / s.count;
        UpdateEwma(p.ewma_state[g], mean, s.count, config);
        p.ewma_ns[g] = p.ewma_state[g].value;
        p.age_windows[g] = 0;
        any_sample = true;
      } else if (p.age_windows[g].has_value()) {
        ++*p.age_windows[g];
      }
    }
    if (any_sample) {
      p.sample_age_windows = 0;
    } else if (p.sample_age_windows.has_value()) {
      ++*p.sample_age_windows;
    }
    next.push_back(std::move(p));
  }
  return next;
}

// Weights and relative scores per op group; returns the best (lowest)
// usable EWMA of each group, which health compares against.
BestEwma UpdateWeights(std::vector<PathScore>& paths) {
  const size_t n = paths.size();
  std::vector<bool> usable(n);
  for (size_t i = 0; i < n; ++i) usable[i] = paths[i].usable;
  BestEwma best;
  for (int g = 0; g < model::kOpGroupCount; ++g) {
    std::vector<std::optional<uint64_t>> ewma(n);
    for (size_t i = 0; i < n; ++i) {
      ewma[i] = paths[i].ewma_ns[g];
      if (usable[i] && ewma[i].has_value() &&
          (!best[g].has_value() || *ewma[i] < *best[g])) {
        best[g] = *ewma[i];
      }
    }
    const std::vector<uint32_t> weights = ComputeWeights(ewma, usable);
    for (size_t i = 0; i < n; ++i) {
      PathScore& p = paths[i];
      p.weight[g] = weights[i];
      if (best[g].has_value() && p.ewma_ns[g].has_value()) {
        p.score[g] = 100.0 * static_cast<double>(*best[g]) /
                     static_cast<double>(std::max<uint64_t>(*p.ewma_ns[g], 1));
      } else {
        p.score[g].reset();
      }
    }
  }
  return best;
}

// Whether a path's EWMA in op group g still speaks for the path: an EWMA
// nothing has refreshed for idle_windows windows (the reads came back, the
// one slow write of the bad minute did not) is history, and must not hold
// the path degraded, or the head asymmetric, for ever.
bool Fresh(const PathScore& p, int g, const Config& config) {
  return p.age_windows[g].has_value() &&
         *p.age_windows[g] < static_cast<uint64_t>(config.idle_windows);
}

// Health of one path at the end of a window, with its hysteresis streaks
// (see the header comment for the rules and their order).
void UpdateHealth(PathScore& p, const PathWindow& w, const BestEwma& best,
                  const Config& config, uint64_t windows) {
  bool over_ratio = false;
  for (int g = 0; g < model::kOpGroupCount; ++g) {
    if (p.usable && best[g].has_value() && p.ewma_ns[g].has_value() &&
        Fresh(p, g, config) &&
        static_cast<double>(*p.ewma_ns[g]) >=
            config.degraded_ratio * static_cast<double>(*best[g])) {
      over_ratio = true;
    }
  }
  p.bad_streak = over_ratio ? p.bad_streak + 1 : 0;
  const bool errors = w.failovers > 0 || w.errors > 0;
  const bool clean = p.usable && !over_ratio && !errors;
  p.clean_streak = clean ? p.clean_streak + 1 : 0;

  const bool was_bad = p.health == model::PathHealth::kDegraded ||
                       p.health == model::PathHealth::kFailed;
  if (!p.usable) {
    p.health = model::PathHealth::kFailed;
  } else if (errors || p.bad_streak >= config.degraded_windows ||
             (was_bad && p.clean_streak < config.recover_windows)) {
    p.health = model::PathHealth::kDegraded;
  } else if (p.sample_age_windows.value_or(windows) >=
             static_cast<uint64_t>(config.idle_windows)) {
    p.health = model::PathHealth::kIdle;
  } else {
    p.health = model::PathHealth::kHealthy;
  }
}

}  // namespace

void HeadScorer::Update(const std::vector<PathWindow>& window) {
  ++windows_;
  paths_ = UpdateEwmas(paths_, window, config_);
  const BestEwma best = UpdateWeights(paths_);
  for (size_t i = 0; i < paths_.size(); ++i) {
    UpdateHealth(paths_[i], window[i], best, config_, windows_);
  }
}

const PathScore* HeadScorer::Find(std::string_view path) const {
  for (const PathScore& p : paths_) {
    if (p.path == path) return &p;
  }
  return nullptr;
}

HeadSummary HeadScorer::Summary() const {
  HeadSummary s;
  for (const PathScore& p : paths_) {
    ++s.paths_by_state[static_cast<int>(p.health)];
    if (p.usable) ++s.usable_paths;
  }
  for (int g = 0; g < model::kOpGroupCount; ++g) {
    std::optional<uint64_t> lo, hi;
    int with = 0;
    for (const PathScore& p : paths_) {
      if (!p.usable || !p.ewma_ns[g].has_value() || !Fresh(p, g, config_)) {
        continue;
      }
      ++with;
      const uint64_t e = *p.ewma_ns[g];
      if (!lo.has_value() || e < *lo) lo = e;
      if (!hi.has_value() || e > *hi) hi = e;
    }
    if (with >= 2) {
      s.imbalance[g] = static_cast<double>(*hi) /
                       static_cast<double>(std::max<uint64_t>(*lo, 1));
      s.imbalance_ratio =
          std::max(s.imbalance_ratio.value_or(0.0), *s.imbalance[g]);
    }
  }
  return s;
}

Advice Advise(const AdvisorInput& input, const Config& config) {
  // "Keep the current policy" for one pathwise does not know is kUnknown:
  // no recommendation to change it (an actuator must leave it alone).
  const model::Iopolicy keep =
      input.current_is_foreign ? model::Iopolicy::kUnknown
      : input.current_iopolicy == model::Iopolicy::kUnknown
          ? model::Iopolicy::kNuma
          : input.current_iopolicy;
  bool multi = false, evidence = false, asymmetric = false;
  std::string why;
  std::set<int> nodes;
  for (const HeadScorer* head : input.heads) {
    if (head == nullptr) continue;
    const HeadSummary s = head->Summary();
    if (s.usable_paths < 2) continue;
    multi = true;
    for (const PathScore& p : head->paths()) {
      if (!p.usable) continue;
      if (p.numa_node >= 0) nodes.insert(p.numa_node);
      if (p.health == model::PathHealth::kDegraded && !asymmetric) {
        asymmetric = true;
        why = "path " + p.path + " is degraded";
      }
    }
    if (s.imbalance_ratio.has_value()) {
      evidence = true;
      if (*s.imbalance_ratio >= config.asymmetric_ratio && !asymmetric) {
        asymmetric = true;
        char buf[64];
        std::snprintf(buf, sizeof(buf), "%.2f", *s.imbalance_ratio);
        why = "latency imbalance " + std::string(buf);
      }
    }
  }
  if (!multi) return {keep, "no head has two usable paths"};
  if (asymmetric) {
    if (input.kernel_has_queue_depth) {
      return {model::Iopolicy::kQueueDepth, "asymmetric paths: " + why};
    }
    return {model::Iopolicy::kRoundRobin,
            "asymmetric paths: " + why + "; kernel has no queue-depth"};
  }
  if (!evidence) return {keep, "no latency evidence yet"};
  if (nodes.size() > 1) {
    return {model::Iopolicy::kNuma, "symmetric paths on several NUMA nodes"};
  }
  return {model::Iopolicy::kRoundRobin, "symmetric paths"};
}

model::PathScoring ToModel(const PathScore& ps, double window_seconds) {
  model::PathScoring m;
  m.health = ps.health;
  for (size_t g = 0; g < model::kOpGroupCount; ++g) {
    if (ps.ewma_ns[g]) {
      m.latency_ewma_seconds[g] = static_cast<double>(*ps.ewma_ns[g]) / 1e9;
    }
    m.weight[g] = ps.weight[g];
    if (ps.score[g]) {
      m.score = std::min(m.score.value_or(*ps.score[g]), *ps.score[g]);
    }
  }
  if (ps.sample_age_windows) {
    m.sample_age_seconds =
        static_cast<double>(*ps.sample_age_windows) * window_seconds;
  }
  return m;
}

model::HeadScoring ToModel(const HeadSummary& summary) {
  model::HeadScoring h;
  h.paths_by_state = summary.paths_by_state;
  h.latency_imbalance_ratio = summary.imbalance_ratio;
  return h;
}

}  // namespace pathwise::scoring

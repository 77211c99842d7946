// SPDX-License-Identifier: Apache-2.0
#include "policy/pathwise_selector.h"

#include <algorithm>
#include <optional>
#include <string>

namespace pathwise::policy {
namespace {

scoring::Config ScorerConfig(const PathwisePolicyParams& params) {
  scoring::Config c;
  c.ewma_shift = params.ewma_shift;
  return c;
}

}  // namespace

PathwiseSelector::PathwiseSelector(const PathwisePolicyParams& params)
    : params_(params), scorer_(ScorerConfig(params)) {}

// A new set of paths: the scorer starts afresh and the usable paths share
// the weight equally until the first tick.
void PathwiseSelector::Reset() {
  const int n = table_.size();
  scorer_ = scoring::HeadScorer(ScorerConfig(params_));
  path_.assign(n, PathState{});
  for (PathState& p : path_) {
    p.mins.fill(kNone);
    for (auto& m : p.op_mins) m.fill(kNone);
  }
  window_.assign(n, {});
  failovers_.assign(n, 0);
  std::vector<bool> usable(n);
  for (int i = 0; i < n; ++i) usable[i] = table_.info(i).usable;
  const std::vector<uint32_t> w0 =
      scoring::ComputeWeights(std::vector<std::optional<uint64_t>>(n), usable);
  for (std::vector<uint32_t>& w : weight_) w = w0;
}

void PathwiseSelector::SetPaths(std::span<const PathInfo> paths) {
  if (table_.Set(paths)) Reset();
}

// A path that stayed past its cap for kBaseWindows ticks has had no
// completion to confirm its base: its latency may be its own queue or a
// slower route. Like BBR's ProbeRTT, it gets no new I/O until it is empty,
// then one probe, whose latency is its base. One path at a time, and never
// the only candidate.
void PathwiseSelector::StartDrain() {
  const int n = table_.size();
  if (table_.candidates().size() < 2) return;
  for (const PathState& p : path_) {
    if (p.drain != 0) return;
  }
  for (int k = 0; k < n; ++k) {
    const int i = (next_drain_ + k) % n;
    PathState& p = path_[i];
    if (!table_.is_candidate(i) || p.base_ns == kNone) continue;
    // A busy path that shows a queue and was not empty once in
    // kBaseWindows ticks: its unloaded latency is only what its loads
    // showed, the queue included. (Without a queue shown, draining it
    // would only send its I/Os to slower paths for a while.)
    const bool never_empty =
        p.queued && p.lone_age > kBaseWindows && table_.inflight(i) > 0;
    if (!never_empty) {
      if (*std::min_element(p.mins.begin(), p.mins.end()) != kNone) continue;
      // Past its knee a path serves at its capacity: only a rate well below
      // what it served lately says its route changed.
      if (p.rate * kDrainRateDrop >=
          *std::max_element(p.rates.begin(), p.rates.end())) {
        continue;
      }
    }
    p.drain = 1;
    next_drain_ = (i + 1) % n;
    return;
  }
}

void PathwiseSelector::Tick(int64_t /*now_ns*/) {
  const int n = table_.size();
  std::vector<scoring::PathWindow> window(n);
  for (int i = 0; i < n; ++i) {
    scoring::PathWindow& pw = window[i];
    pw.path = std::to_string(i);
    pw.ops = window_[i];
    pw.usable = table_.info(i).usable;
    pw.failovers = failovers_[i];
    pw.numa_node = table_.info(i).numa_node;
    window_[i] = {};
    failovers_[i] = 0;
    // The base forgets the oldest tick's lowest latency.
    PathState& p = path_[i];
    p.mins[p.next] = p.window_min_ns;
    for (int g = 0; g < kGroups; ++g) {
      p.op_mins[g][p.next] = p.op_window_min_ns[g];
      p.op_window_min_ns[g] = kNone;
      const uint64_t op_base =
          *std::min_element(p.op_mins[g].begin(), p.op_mins[g].end());
      if (op_base != kNone) p.op_base_ns[g] = op_base;
    }
    p.rates[p.next] = p.rate;
    p.next = (p.next + 1) % kBaseWindows;
    p.window_min_ns = kNone;
    // What one more I/O costs at each load is learned afresh.
    p.all.sent.fill(LoadLevel{});
    for (Latencies& l : p.op) l.sent.fill(LoadLevel{});
    if (++p.lone_age > kBaseWindows) {
      p.all.lone = LoadLevel{};
      for (Latencies& l : p.op) l.lone = LoadLevel{};
    }
    const uint64_t base = *std::min_element(p.mins.begin(), p.mins.end());
    // With no admitted completion in the whole span, keep the last base.
    if (base != kNone) p.base_ns = base;
    PathState::UpdateCap(p);
  }
  StartDrain();
  scorer_.Update(window);
  for (int g = 0; g < kGroups; ++g) {
    for (int i = 0; i < n; ++i) weight_[g][i] = scorer_.paths()[i].weight[g];
  }
}

}  // namespace pathwise::policy

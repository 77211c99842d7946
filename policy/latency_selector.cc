// SPDX-License-Identifier: Apache-2.0
#include "policy/latency_selector.h"

namespace pathwise::policy {

LatencySelector::LatencySelector(const LatencyPolicyParams& params,
                                 const SelectorOptions& options)
    : params_(params),
      start_ns_(options.start_ns),
      cpus_(std::max(options.cpus, 1)) {}

void LatencySelector::Reset() {
  stats_.assign(static_cast<size_t>(cpus_) * kGroups * table_.size(), Stat{});
  window_start_.assign(static_cast<size_t>(cpus_) * kGroups, start_ns_);
}

void LatencySelector::SetPaths(std::span<const PathInfo> paths) {
  if (table_.Set(paths) || stats_.empty()) Reset();
}

// Grows the per-CPU state for a CPU beyond `cpus`; the layout is CPU-major,
// so the new CPUs' state is appended.
void LatencySelector::AddCpus(int cpu) {
  cpus_ = cpu + 1;
  stats_.resize(static_cast<size_t>(cpus_) * kGroups * table_.size());
  window_start_.resize(static_cast<size_t>(cpus_) * kGroups, start_ns_);
}

void LatencySelector::Refill(int cpu, int g) {
  const int n = table_.size();
  ewma_scratch_.assign(n, std::nullopt);
  usable_scratch_.assign(n, false);
  for (int i : table_.candidates()) {
    ewma_scratch_[i] = At(cpu, g, i).ewma;
    usable_scratch_[i] = true;
  }
  const std::vector<uint32_t> w =
      scoring::ComputeWeights(ewma_scratch_, usable_scratch_);
  for (int i : table_.candidates()) At(cpu, g, i).credit = w[i];
}

// The first completion at least a window after the last one folds each
// path's batch mean into its EWMA.
void LatencySelector::CloseWindow(int cpu, int g) {
  for (int i = 0; i < table_.size(); ++i) {
    Stat& t = At(cpu, g, i);
    if (t.count == 0) continue;
    const uint64_t mean = t.sum / t.count;
    t.ewma = t.ewma.has_value()
                 ? scoring::EwmaStep(*t.ewma, mean, params_.ewma_shift)
                 : mean;
    t.sum = 0;
    t.count = 0;
  }
}

std::optional<uint64_t> LatencySelector::ewma(int cpu, model::OpGroup op,
                                              int path) const {
  if (cpu < 0 || cpu >= cpus_ || !table_.Has(path)) return std::nullopt;
  return stats_[(static_cast<size_t>(cpu) * kGroups + static_cast<int>(op)) *
                    table_.size() +
                path]
      .ewma;
}

}  // namespace pathwise::policy

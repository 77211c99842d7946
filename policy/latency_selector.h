// SPDX-License-Identifier: Apache-2.0
// latency: the proposed kernel latency iopolicy as we read it. Per CPU and
// op group, each completion's path latency joins a batch; the first
// completion at least `window_ns` after the group's last window closes it
// and folds each path's batch mean into the path's EWMA (the scoring
// library's EwmaStep). Weights come from those EWMAs (scoring's
// ComputeWeights: score x 64 / sum, at least 1); I/O is handed out by
// per-CPU credits: the first candidate in list order with credit left takes
// it, and when every candidate's credit is spent each gets its weight again.
// Before the first window every weight is equal (round-robin in runs).
#ifndef PATHWISE_POLICY_LATENCY_SELECTOR_H_
#define PATHWISE_POLICY_LATENCY_SELECTOR_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "policy/path_table.h"
#include "policy/selector.h"

namespace pathwise::policy {

class LatencySelector final : public Selector {
 public:
  LatencySelector(const LatencyPolicyParams& params,
                  const SelectorOptions& options);

  Policy policy() const override { return Policy::kLatency; }
  void SetPaths(std::span<const PathInfo> paths) override;
  int Select(const IoRequest& io) override {
    const std::vector<int>& cand = table_.candidates();
    if (cand.empty()) return kNoPath;
    const int cpu = std::max(io.cpu, 0);
    if (cpu >= cpus_) AddCpus(cpu);
    const int g = static_cast<int>(io.op);
    // Every candidate gets at least weight 1, so the second pass finds one.
    for (int pass = 0; pass < 2; ++pass) {
      for (int i : cand) {
        Stat& s = At(cpu, g, i);
        if (s.credit > 0) {
          --s.credit;
          return i;
        }
      }
      Refill(cpu, g);
    }
    return cand.front();
  }
  void OnSubmit(int path, const IoRequest&, int64_t) override {
    table_.Submitted(path);
  }
  void OnComplete(int path, const IoRequest& io,
                  const Completion& completion) override {
    table_.Left(path);
    if (!completion.ok || !table_.Has(path)) return;
    const int cpu = std::max(io.cpu, 0);
    if (cpu >= cpus_) AddCpus(cpu);
    const int g = static_cast<int>(io.op);
    Stat& s = At(cpu, g, path);
    s.sum += static_cast<uint64_t>(completion.latency_ns);
    ++s.count;
    int64_t& start = window_start_[static_cast<size_t>(cpu) * kGroups + g];
    if (completion.now_ns - start < params_.window_ns) return;
    start = completion.now_ns;
    CloseWindow(cpu, g);
  }
  int inflight(int path) const override { return table_.InflightOrZero(path); }

  // The EWMA of `path` for `cpu` and `op` (nullopt before its first window).
  std::optional<uint64_t> ewma(int cpu, model::OpGroup op, int path) const;

 private:
  static constexpr int kGroups = model::kOpGroupCount;
  // One path's state for one CPU and op group.
  struct Stat {
    uint64_t sum = 0;  // this window's latencies
    uint64_t count = 0;
    std::optional<uint64_t> ewma;
    int64_t credit = 0;
  };

  Stat& At(int cpu, int g, int path) {
    return stats_[(static_cast<size_t>(cpu) * kGroups + g) * table_.size() +
                  path];
  }
  void AddCpus(int cpu);
  void Refill(int cpu, int g);
  void CloseWindow(int cpu, int g);
  void Reset();

  LatencyPolicyParams params_;
  int64_t start_ns_;
  int cpus_;
  PathTable table_;
  std::vector<Stat> stats_;            // [cpu][group][path]
  std::vector<int64_t> window_start_;  // [cpu][group]
  std::vector<std::optional<uint64_t>> ewma_scratch_;
  std::vector<bool> usable_scratch_;
};

}  // namespace pathwise::policy

#endif  // PATHWISE_POLICY_LATENCY_SELECTOR_H_

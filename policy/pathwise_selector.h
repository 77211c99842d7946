// pathwise: a weighted least-outstanding selector on the scoring library's
// weights (the agent's own code). Each completion's path latency is summed
// per path and op group; every `window_ns` (Tick) the window, each path's
// usability and its failovers feed a scoring::HeadScorer, whose weights
// (score x 64 / sum, 0 for a path that is not usable) steer the choice: the
// candidate with the least (in-flight + 1) / weight, first in list order on
// ties; weight-0 paths are skipped, and with none left it falls back to
// queue-depth. Before the first tick the usable paths share 64 equally; a
// path that becomes usable later gets its weight at the next tick.
#ifndef PATHWISE_POLICY_PATHWISE_SELECTOR_H_
#define PATHWISE_POLICY_PATHWISE_SELECTOR_H_

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "policy/path_table.h"
#include "policy/selector.h"
#include "scoring/scoring.h"

namespace pathwise::policy {

class PathwiseSelector final : public Selector {
 public:
  explicit PathwiseSelector(const PathwisePolicyParams& params);

  Policy policy() const override { return Policy::kPathwise; }
  void SetPaths(std::span<const PathInfo> paths) override;
  int Select(const IoRequest& io) override {
    const std::vector<uint32_t>& w = weight_[static_cast<int>(io.op)];
    int best = kNoPath;
    for (int i : table_.candidates()) {
      if (w[i] == 0) continue;
      // (in-flight + 1) / weight, compared without division.
      if (best < 0 ||
          static_cast<uint64_t>(table_.inflight(i) + 1) * w[best] <
              static_cast<uint64_t>(table_.inflight(best) + 1) * w[i]) {
        best = i;
      }
    }
    return best >= 0 ? best : table_.LeastInFlight();
  }
  void OnSubmit(int path, const IoRequest&, int64_t) override {
    table_.Submitted(path);
  }
  void OnComplete(int path, const IoRequest& io,
                  const Completion& completion) override {
    table_.Left(path);
    if (!table_.Has(path)) return;
    if (!completion.ok) {
      ++failovers_[path];
      return;
    }
    scoring::OpSample& s = window_[path][static_cast<int>(io.op)];
    ++s.count;
    s.latency_sum_ns += static_cast<uint64_t>(completion.latency_ns);
  }
  int64_t tick_interval_ns() const override { return params_.window_ns; }
  void Tick(int64_t now_ns) override;
  int inflight(int path) const override { return table_.InflightOrZero(path); }

  // The weight `path` has in `op` now (0..scoring::kMaxWeight).
  uint32_t weight(model::OpGroup op, int path) const {
    return table_.Has(path) ? weight_[static_cast<int>(op)][path] : 0;
  }
  // The scorer's view (EWMAs, health), keyed by the path's index as text.
  const scoring::HeadScorer& scorer() const { return scorer_; }

 private:
  static constexpr int kGroups = model::kOpGroupCount;
  void Reset();

  PathwisePolicyParams params_;
  PathTable table_;
  scoring::HeadScorer scorer_;
  std::array<std::vector<uint32_t>, kGroups> weight_;  // [group][path]
  // This window's completions and failovers, per path.
  std::vector<std::array<scoring::OpSample, kGroups>> window_;
  std::vector<uint64_t> failovers_;
};

}  // namespace pathwise::policy

#endif  // PATHWISE_POLICY_PATHWISE_SELECTOR_H_

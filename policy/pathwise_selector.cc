#include "policy/pathwise_selector.h"

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

int PathwiseSelector::Select(const IoRequest& io) {
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

void PathwiseSelector::OnComplete(int path, const IoRequest& io,
                                  const Completion& completion) {
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
  }
  scorer_.Update(window);
  for (int g = 0; g < kGroups; ++g) {
    for (int i = 0; i < n; ++i) weight_[g][i] = scorer_.paths()[i].weight[g];
  }
}

}  // namespace pathwise::policy

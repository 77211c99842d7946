#include "policy/hst_selector.h"

#include "scoring/scoring.h"

namespace pathwise::policy {

void HstSelector::SetPaths(std::span<const PathInfo> paths) {
  if (table_.Set(paths)) ewma_.assign(table_.size(), 0);
}

int HstSelector::Select(const IoRequest& /*io*/) {
  // (in-flight + 1) x EWMA in 128 bits: an EWMA of seconds times thousands
  // of I/Os would overflow 64.
  using u128 = unsigned __int128;
  int best = kNoPath;
  for (int i : table_.candidates()) {
    if (best < 0 ||
        static_cast<u128>(table_.inflight(i) + 1) * ewma_[i] <
            static_cast<u128>(table_.inflight(best) + 1) * ewma_[best]) {
      best = i;
    }
  }
  return best;
}

void HstSelector::OnComplete(int path, const IoRequest& /*io*/,
                             const Completion& completion) {
  table_.Left(path);
  if (!completion.ok || !table_.Has(path)) return;
  uint64_t& e = ewma_[path];
  const auto lat = static_cast<uint64_t>(completion.latency_ns);
  e = e == 0 ? lat : scoring::EwmaStep(e, lat, params_.ewma_shift);
}

}  // namespace pathwise::policy

// SPDX-License-Identifier: Apache-2.0
// hst: dm-multipath's historical-service-time. Each path keeps an EWMA of
// its completions' service time, updated at every successful completion
// (the first one sets it); the candidate with the least
// (in-flight + 1) x EWMA takes the I/O, first in list order on ties.
#ifndef PATHWISE_POLICY_HST_SELECTOR_H_
#define PATHWISE_POLICY_HST_SELECTOR_H_

#include <cstdint>
#include <span>
#include <vector>

#include "policy/path_table.h"
#include "policy/selector.h"
#include "scoring/scoring.h"

namespace pathwise::policy {

class HstSelector final : public Selector {
 public:
  explicit HstSelector(const HstParams& params) : params_(params) {}

  Policy policy() const override { return Policy::kHst; }
  void SetPaths(std::span<const PathInfo> paths) override;
  int Select(const IoRequest& /*io*/) override {
    // (in-flight + 1) x EWMA in 128 bits: an EWMA of seconds times
    // thousands of I/Os would overflow 64.
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
  void OnSubmit(int path, const IoRequest&, int64_t) override {
    table_.Submitted(path);
  }
  void OnComplete(int path, const IoRequest& /*io*/,
                  const Completion& completion) override {
    table_.Left(path);
    if (!completion.ok || !table_.Has(path)) return;
    uint64_t& e = ewma_[path];
    const auto lat = static_cast<uint64_t>(completion.latency_ns);
    e = e == 0 ? lat : scoring::EwmaStep(e, lat, params_.ewma_shift);
  }
  int inflight(int path) const override { return table_.InflightOrZero(path); }

  // The service-time EWMA of `path` in ns (0: no completion yet).
  uint64_t ewma(int path) const { return table_.Has(path) ? ewma_[path] : 0; }

 private:
  HstParams params_;
  PathTable table_;
  std::vector<uint64_t> ewma_;
};

}  // namespace pathwise::policy

#endif  // PATHWISE_POLICY_HST_SELECTOR_H_

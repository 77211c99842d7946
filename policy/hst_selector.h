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

namespace pathwise::policy {

class HstSelector final : public Selector {
 public:
  explicit HstSelector(const HstParams& params) : params_(params) {}

  Policy policy() const override { return Policy::kHst; }
  void SetPaths(std::span<const PathInfo> paths) override;
  int Select(const IoRequest& io) override;
  void OnSubmit(int path, const IoRequest&, int64_t) override {
    table_.Submitted(path);
  }
  void OnComplete(int path, const IoRequest& io,
                  const Completion& completion) override;
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

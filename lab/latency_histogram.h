// The lab's latency histogram: what `pathwise lab` reports its p50/p99/p999
// from.
#ifndef PATHWISE_LAB_LATENCY_HISTOGRAM_H_
#define PATHWISE_LAB_LATENCY_HISTOGRAM_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/base/attributes.h"

namespace pathwise::lab {

// Log-linear latency histogram: exact below 128 ns, then 64 sub-buckets per
// power of two (< 1.6% relative bucket width).
class LatencyHistogram {
 public:
  ABSL_ATTRIBUTE_ALWAYS_INLINE void Add(int64_t ns) {
    const uint64_t v = ns < 0 ? 0 : static_cast<uint64_t>(ns);
    const size_t i = Index(v);
    if (i >= counts_.size()) counts_.resize(i + 1, 0);
    ++counts_[i];
    ++total_;
  }
  // The q-quantile (nearest rank), as the bucket's midpoint, in ns.
  double Quantile(double q) const {
    if (total_ == 0) return 0;
    const auto rank = static_cast<uint64_t>(
        std::max(1.0, std::ceil(q * static_cast<double>(total_))));
    uint64_t seen = 0;
    for (size_t i = 0; i < counts_.size(); ++i) {
      seen += counts_[i];
      if (seen >= rank) return Mid(i);
    }
    return Mid(counts_.size() - 1);
  }

 private:
  static size_t Index(uint64_t v) {
    if (v < 128) return v;
    const int e = 63 - __builtin_clzll(v);  // >= 7
    const uint64_t m = v >> (e - 6);        // 64..127
    return 128 + static_cast<size_t>(e - 7) * 64 + (m - 64);
  }
  static double Mid(size_t i) {
    if (i < 128) return static_cast<double>(i);
    const size_t e = (i - 128) / 64 + 7;
    const uint64_t m = (i - 128) % 64 + 64;
    const double lo = std::ldexp(static_cast<double>(m), e - 6);
    const double width = std::ldexp(1.0, e - 6);
    return lo + width / 2;
  }
  std::vector<uint64_t> counts_;
  uint64_t total_ = 0;
};

}  // namespace pathwise::lab

#endif  // PATHWISE_LAB_LATENCY_HISTOGRAM_H_

// SPDX-License-Identifier: Apache-2.0
#include "exporters/histogram_exposition.h"

#include <cmath>
#include <limits>

namespace pathwise::exporters {
namespace {

using Hist = model::LatencyHistogram;

// The smallest i with 2^(i/4) >= seconds: log2 gives it up to rounding,
// the loops settle the last ulp either way.
int32_t NativeIndexOf(double seconds) {
  constexpr double kPerOctave = 1 << kNativeSchema;
  auto upper = [](int32_t i) { return std::exp2(i / kPerOctave); };
  auto i = static_cast<int32_t>(std::ceil(std::log2(seconds) * kPerOctave));
  while (upper(i) < seconds) ++i;
  while (upper(i - 1) >= seconds) --i;
  return i;
}

struct NativeTable {
  std::array<int32_t, Hist::kBuckets> index{};
  NativeTable() {
    for (size_t s = 1; s < Hist::kFiniteBuckets; ++s) {
      index[s] = NativeIndexOf(Hist::UpperBoundSeconds(s));
    }
    index[Hist::kFiniteBuckets] = index[Hist::kFiniteBuckets - 1] + 1;
  }
};

const NativeTable& Table() {
  static const NativeTable table;
  return table;
}

}  // namespace

double CoarseUpperBoundSeconds(size_t j) {
  return Hist::UpperBoundSeconds(CoarseToKernelSlot(j));
}

std::array<uint64_t, kCoarseBuckets> CoarseCumulative(const Hist& h) {
  std::array<uint64_t, kCoarseBuckets> out{};
  const auto& b = h.buckets();
  uint64_t run = 0;
  size_t slot = 0;
  for (size_t j = 0; j < kCoarseBuckets; ++j) {
    for (const size_t last = CoarseToKernelSlot(j); slot <= last; ++slot) {
      run += b[slot];
    }
    out[j] = run;
  }
  return out;
}

double SparseUpperBoundSeconds(size_t j) {
  return CoarseUpperBoundSeconds(SparseToCoarse(j));
}

std::array<uint64_t, kSparseBuckets> SparseCumulative(const Hist& h) {
  const std::array<uint64_t, kCoarseBuckets> coarse = CoarseCumulative(h);
  std::array<uint64_t, kSparseBuckets> out{};
  for (size_t j = 0; j < kSparseBuckets; ++j)
    out[j] = coarse[SparseToCoarse(j)];
  return out;
}

double NativeZeroThresholdSeconds() { return Hist::UpperBoundSeconds(0); }

int32_t NativeBucketOfKernelSlot(size_t slot) { return Table().index[slot]; }

NativeHistogram ToNative(std::span<const uint64_t> cumulative) {
  NativeHistogram n;
  const NativeTable& t = Table();
  n.zero_count = cumulative.empty() ? 0 : cumulative[0];
  int64_t prev_count = 0;
  int32_t prev_index = 0;
  bool first = true;
  for (size_t s = 1; s < cumulative.size() && s < Hist::kBuckets; ++s) {
    // Cumulative counts never fall; a malformed input is read as 0.
    const uint64_t c = cumulative[s] >= cumulative[s - 1]
                           ? cumulative[s] - cumulative[s - 1]
                           : 0;
    if (c == 0) continue;
    const int32_t i = t.index[s];
    if (first) {
      n.spans.push_back({i, 1});
      first = false;
    } else if (i == prev_index + 1) {
      ++n.spans.back().length;
    } else {
      n.spans.push_back({i - prev_index - 1, 1});
    }
    n.deltas.push_back(static_cast<int64_t>(c) - prev_count);
    prev_count = static_cast<int64_t>(c);
    prev_index = i;
  }
  return n;
}

}  // namespace pathwise::exporters

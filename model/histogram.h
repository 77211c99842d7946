// SPDX-License-Identifier: Apache-2.0
// Latency histograms: a log-linear bucket layout over nanoseconds with
// Prometheus `le` semantics, and the histogram value type built on it, with
// exact merging, deltas between two snapshots of one histogram, and
// quantiles the way Prometheus' histogram_quantile() computes them.
#ifndef PATHWISE_MODEL_HISTOGRAM_H_
#define PATHWISE_MODEL_HISTOGRAM_H_

#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace pathwise::model {

// Bucket 0 holds latencies <= 2^MinShift ns. Every octave (2^k, 2^(k+1)]
// for MinShift <= k < MaxShift is split into 2^SubBits equal sub-buckets;
// the last finite upper bound is 2^MaxShift ns, and the last slot is +Inf.
// Upper bounds are inclusive (the `le` label): a latency equal to a bound
// lands in that bound's bucket, never in the next.
template <int SubBits, int MinShift, int MaxShift>
struct LogLinearLayout {
  static_assert(SubBits >= 0 && SubBits <= MinShift && MinShift < MaxShift &&
                MaxShift < 63);
  static constexpr size_t kFiniteBuckets =
      1 + (static_cast<size_t>(MaxShift - MinShift) << SubBits);
  static constexpr size_t kBuckets = kFiniteBuckets + 1;  // + the +Inf slot
  static constexpr uint64_t kInfinite = std::numeric_limits<uint64_t>::max();

  // Inclusive upper bound of bucket i in ns; kInfinite from the +Inf slot.
  static constexpr uint64_t UpperBoundNs(size_t i) {
    if (i >= kFiniteBuckets) return kInfinite;
    if (i == 0) return uint64_t{1} << MinShift;
    const size_t j = i - 1;
    const int k = MinShift + static_cast<int>(j >> SubBits);
    const uint64_t sub = j & ((size_t{1} << SubBits) - 1);
    return (uint64_t{1} << k) + ((sub + 1) << (k - SubBits));
  }
  // The same in seconds, the unit of the `le` label; +inf for the last.
  static double UpperBoundSeconds(size_t i) {
    if (i >= kFiniteBuckets) return std::numeric_limits<double>::infinity();
    // Exact: every bound is an integer number of ns below 2^53.
    return static_cast<double>(UpperBoundNs(i)) / 1e9;
  }
  // The bucket of a latency of `ns` nanoseconds: bucketing v - 1 over
  // half-open ranges is what keeps the upper bounds inclusive.
  static constexpr size_t BucketFor(uint64_t ns) {
    if (ns <= (uint64_t{1} << MinShift)) return 0;
    const uint64_t v = ns - 1;
    if (v >= (uint64_t{1} << MaxShift)) return kBuckets - 1;
    const int k = std::bit_width(v) - 1;  // MinShift <= k < MaxShift
    const uint64_t sub = (v >> (k - SubBits)) & ((uint64_t{1} << SubBits) - 1);
    return 1 + (static_cast<size_t>(k - MinShift) << SubBits) + sub;
  }
};

// The layout the BPF programs fill (bpf/pathwise_hist.h; bpf/status.cc
// checks they agree): 1.024 us to 68.7 s, 4 buckets per octave, 106 slots.
using KernelLatencyLayout = LogLinearLayout<2, 10, 36>;

template <typename Layout>
class BasicLatencyHistogram {
 public:
  using LayoutType = Layout;
  static constexpr size_t kBuckets = Layout::kBuckets;
  static constexpr size_t kFiniteBuckets = Layout::kFiniteBuckets;
  static constexpr uint64_t kInfinite = Layout::kInfinite;

  static constexpr uint64_t UpperBoundNs(size_t i) {
    return Layout::UpperBoundNs(i);
  }
  static double UpperBoundSeconds(size_t i) {
    return Layout::UpperBoundSeconds(i);
  }
  static constexpr size_t BucketFor(uint64_t ns) {
    return Layout::BucketFor(ns);
  }

  // Records `n` observations of `ns` nanoseconds.
  void Observe(uint64_t ns, uint64_t n = 1) { buckets_[BucketFor(ns)] += n; }
  // Adds `n` to slot `i` (i < kBuckets), as read from the kernel.
  void AddToBucket(size_t i, uint64_t n) { buckets_[i] += n; }

  // Exact: the merged histogram is the histogram of the union of both
  // observation sets.
  void Merge(const BasicLatencyHistogram& other) {
    for (size_t i = 0; i < kBuckets; ++i) buckets_[i] += other.buckets_[i];
  }

  // The observations made since `earlier`, an earlier snapshot of this same
  // histogram. A bucket that went backwards (the source was restarted)
  // contributes nothing.
  BasicLatencyHistogram Delta(const BasicLatencyHistogram& earlier) const {
    BasicLatencyHistogram d;
    for (size_t i = 0; i < kBuckets; ++i) {
      d.buckets_[i] = buckets_[i] >= earlier.buckets_[i]
                          ? buckets_[i] - earlier.buckets_[i]
                          : 0;
    }
    return d;
  }

  // Total observations (the `_count` of a Prometheus histogram).
  uint64_t Count() const {
    uint64_t n = 0;
    for (uint64_t b : buckets_) n += b;
    return n;
  }
  // Non-cumulative counts per slot.
  const std::array<uint64_t, kBuckets>& buckets() const { return buckets_; }
  // Cumulative counts per slot, as exported: Cumulative()[i] is the number
  // of observations <= UpperBoundNs(i); the last equals Count().
  std::array<uint64_t, kBuckets> Cumulative() const {
    std::array<uint64_t, kBuckets> out{};
    uint64_t run = 0;
    for (size_t i = 0; i < kBuckets; ++i) out[i] = run += buckets_[i];
    return out;
  }

  // The q-quantile (0 <= q <= 1) in seconds, as Prometheus'
  // histogram_quantile() estimates it: linear interpolation inside the
  // bucket that holds the rank, 0 as the lower edge of the first bucket,
  // and the last finite bound when the rank falls in +Inf. NaN when empty
  // or q is NaN; -Inf for q < 0 and +Inf for q > 1.
  double Quantile(double q) const {
    const uint64_t total = Count();
    if (total == 0 || std::isnan(q)) return std::nan("");
    if (q < 0) return -std::numeric_limits<double>::infinity();
    if (q > 1) return std::numeric_limits<double>::infinity();
    const double rank = q * static_cast<double>(total);
    uint64_t below = 0;
    for (size_t i = 0; i < kBuckets; ++i) {
      const uint64_t in_bucket = buckets_[i];
      if (in_bucket > 0 && static_cast<double>(below + in_bucket) >= rank) {
        if (i == kFiniteBuckets) return UpperBoundSeconds(kFiniteBuckets - 1);
        const double lower = i == 0 ? 0.0 : UpperBoundSeconds(i - 1);
        const double upper = UpperBoundSeconds(i);
        const double frac = (rank - static_cast<double>(below)) /
                            static_cast<double>(in_bucket);
        return lower + (upper - lower) * frac;
      }
      below += in_bucket;
    }
    return UpperBoundSeconds(kFiniteBuckets - 1);
  }

  friend bool operator==(const BasicLatencyHistogram&,
                         const BasicLatencyHistogram&) = default;

 private:
  std::array<uint64_t, kBuckets> buckets_{};
};

// The histogram of the model: what the BPF sampler fills and the
// exporters publish.
using LatencyHistogram = BasicLatencyHistogram<KernelLatencyLayout>;

}  // namespace pathwise::model

#endif  // PATHWISE_MODEL_HISTOGRAM_H_

// Latency histograms of the BPF sampler: the bucket layout the kernel side
// fills (bpf/pathwise_hist.h, shared verbatim), Prometheus `le` bounds,
// exact merging, and quantile estimation. Pure value types, no BPF.
#ifndef PATHWISE_BPF_HISTOGRAM_H_
#define PATHWISE_BPF_HISTOGRAM_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>

namespace pathwise::bpf {

// Log-linear buckets over nanoseconds: bucket 0 is (0, 1.024 us], then 4
// sub-buckets per power of two up to 2^36 ns (68.7 s), then +Inf.
// Upper bounds are inclusive (Prometheus `le`): a latency equal to a bound
// is counted in that bound's bucket.
class LatencyHistogram {
 public:
  // Number of slots, the last one being +Inf.
  static constexpr size_t kBuckets = 106;
  static constexpr size_t kFiniteBuckets = kBuckets - 1;
  static constexpr uint64_t kInfinite = std::numeric_limits<uint64_t>::max();

  // Inclusive upper bound of bucket `i` in nanoseconds; kInfinite for the
  // last slot (and for any i >= kBuckets).
  static uint64_t UpperBoundNs(size_t i);
  // The same in seconds, the unit of the `le` label; +inf for the last.
  static double UpperBoundSeconds(size_t i);
  // The bucket a latency of `ns` nanoseconds falls in (same code as the
  // BPF program).
  static size_t BucketFor(uint64_t ns);

  LatencyHistogram() = default;

  // Records `n` observations of `ns` nanoseconds.
  void Observe(uint64_t ns, uint64_t n = 1) { buckets_[BucketFor(ns)] += n; }
  // Adds `n` to slot `i` (i < kBuckets), as read from the kernel.
  void AddToBucket(size_t i, uint64_t n) { buckets_[i] += n; }
  // Adds raw, non-cumulative kernel buckets; `raw` must have kBuckets slots.
  void AddRaw(std::span<const uint64_t> raw);

  // Exact: the merged histogram is the histogram of the union of both
  // observation sets (all histograms share one layout).
  void Merge(const LatencyHistogram& other);

  // Total observations (the `_count` of a Prometheus histogram).
  uint64_t Count() const;
  // Non-cumulative counts per slot.
  const std::array<uint64_t, kBuckets>& buckets() const { return buckets_; }
  // Cumulative counts per slot, as exported: Cumulative()[i] is the number
  // of observations <= UpperBoundNs(i); the last equals Count().
  std::array<uint64_t, kBuckets> Cumulative() const;

  // Estimates the q-quantile (0 <= q <= 1) in seconds the way Prometheus'
  // histogram_quantile() does: linear interpolation inside the bucket that
  // holds the rank, 0 as the lower edge of the first bucket, and the last
  // finite bound when the rank falls in +Inf. NaN when empty.
  double QuantileSeconds(double q) const;

  friend bool operator==(const LatencyHistogram&,
                         const LatencyHistogram&) = default;

 private:
  std::array<uint64_t, kBuckets> buckets_{};
};

}  // namespace pathwise::bpf

#endif  // PATHWISE_BPF_HISTOGRAM_H_

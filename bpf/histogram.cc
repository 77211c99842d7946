#include "bpf/histogram.h"

#include <cmath>

extern "C" {
#include "bpf/pathwise_hist.h"
}

namespace pathwise::bpf {

static_assert(LatencyHistogram::kBuckets == PW_HIST_BUCKETS,
              "histogram layout must match bpf/pathwise_bpf.h");
static_assert(LatencyHistogram::kFiniteBuckets == PW_HIST_FINITE);

uint64_t LatencyHistogram::UpperBoundNs(size_t i) {
  if (i >= kFiniteBuckets) return kInfinite;
  return pw_hist_upper_ns(static_cast<__u32>(i));
}

double LatencyHistogram::UpperBoundSeconds(size_t i) {
  if (i >= kFiniteBuckets) return std::numeric_limits<double>::infinity();
  // Exact: every bound is an integer number of ns below 2^53.
  return static_cast<double>(UpperBoundNs(i)) / 1e9;
}

size_t LatencyHistogram::BucketFor(uint64_t ns) { return pw_hist_bucket(ns); }

void LatencyHistogram::AddRaw(std::span<const uint64_t> raw) {
  for (size_t i = 0; i < kBuckets && i < raw.size(); ++i) buckets_[i] += raw[i];
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  for (size_t i = 0; i < kBuckets; ++i) buckets_[i] += other.buckets_[i];
}

uint64_t LatencyHistogram::Count() const {
  uint64_t n = 0;
  for (uint64_t b : buckets_) n += b;
  return n;
}

std::array<uint64_t, LatencyHistogram::kBuckets> LatencyHistogram::Cumulative()
    const {
  std::array<uint64_t, kBuckets> out{};
  uint64_t run = 0;
  for (size_t i = 0; i < kBuckets; ++i) {
    run += buckets_[i];
    out[i] = run;
  }
  return out;
}

double LatencyHistogram::QuantileSeconds(double q) const {
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
      const double frac =
          (rank - static_cast<double>(below)) / static_cast<double>(in_bucket);
      return lower + (upper - lower) * frac;
    }
    below += in_bucket;
  }
  return UpperBoundSeconds(kFiniteBuckets - 1);
}

}  // namespace pathwise::bpf

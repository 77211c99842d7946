// SPDX-License-Identifier: Apache-2.0
// How a latency histogram (model/histogram.h, the kernel's log-linear
// layout: 106 slots, 4 per power of two of nanoseconds) is exposed to
// Prometheus: as sparse classic buckets (the default metrics profile's), as
// coarse ones (the full profile's), as the kernel's fine classic buckets,
// or as a native histogram (protobuf exposition only).
//
// Coarse buckets: le = 2^k ns for k = 12..35 (4.096 us to 34.36 s) and +Inf,
// 25 buckets. Every coarse bound is a kernel bound, so folding is exact:
// the coarse cumulative count at 2^k ns is the fine one at the same bound;
// nothing is interpolated and every observation keeps its `le`. Heads,
// paths, devices and probes all use these bounds, so they stay comparable.
//
// Native buckets: schema 2 (4 per power of two of seconds, bucket i holding
// (2^((i-1)/4), 2^(i/4)]). The kernel's bounds are powers of two of
// nanoseconds, 2^k ns = 2^(k - 29.897) s, so its octaves sit 0.103 of an
// octave above the native ones, and its 4 linear sub-buckets (x1.25, x1.5,
// x1.75, x2) fall one into each native bucket: kernel slot s >= 1 maps to
// the native bucket that holds its upper bound, one to one, consecutive
// slots to consecutive indexes. That bucket lies above the kernel's
// ((lo, hi] -> (L, U] with lo < L < hi <= U <= 1.1077 hi), so an
// observation is never counted below its value and its bucket's upper bound
// is at most 10.8% above the kernel's. Slot 0 (<= 1.024 us) is the zero
// bucket (zero_threshold 1.024 us), which is exact; the +Inf slot (> 68.72
// s) goes to the native bucket right after the one holding 68.72 s.
#ifndef PATHWISE_EXPORTERS_HISTOGRAM_EXPOSITION_H_
#define PATHWISE_EXPORTERS_HISTOGRAM_EXPOSITION_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "model/histogram.h"

namespace pathwise::exporters {

// --histogram-buckets: which classic buckets the text exposition carries.
// kSparse is the default metrics profile's (exporters/prometheus_families.h).
enum class HistogramBuckets { kCoarse, kFine, kSparse };

// The coarse layout: bucket j < kCoarseFinite has le = 2^(kCoarseMinShift +
// j) ns; the last is +Inf.
inline constexpr int kCoarseMinShift = 12;
inline constexpr int kCoarseMaxShift = 35;
inline constexpr size_t kCoarseFinite = kCoarseMaxShift - kCoarseMinShift + 1;
inline constexpr size_t kCoarseBuckets = kCoarseFinite + 1;

// The kernel slot whose upper bound is coarse bucket j's (the +Inf slot for
// the last).
constexpr size_t CoarseToKernelSlot(size_t j) {
  if (j >= kCoarseFinite) return model::LatencyHistogram::kBuckets - 1;
  // Kernel slot 4 * (k - 10) has the upper bound 2^k ns (k > 10).
  return 4 * static_cast<size_t>(kCoarseMinShift + static_cast<int>(j) - 10);
}
static_assert(model::LatencyHistogram::UpperBoundNs(CoarseToKernelSlot(0)) ==
              uint64_t{1} << kCoarseMinShift);
static_assert(model::LatencyHistogram::UpperBoundNs(CoarseToKernelSlot(
                  kCoarseFinite - 1)) == uint64_t{1} << kCoarseMaxShift);

// The sparse layout: 11 of the coarse bounds and +Inf, 12 buckets, so that
// a histogram costs 14 series (buckets, _sum, _count) instead of 27: le =
// 8.192 us, then twice per octave from 32.77 us to 1.049 ms (where NVMe and
// NVMe/TCP latencies live), then every other octave to 268.4 ms (beyond it
// a path is failing, which its health and failover series say). Every
// sparse bound is a coarse one, so folding is exact as for the coarse
// layout; a quantile's estimate lies in the same bucket as the true value,
// within a factor 4 of it above 1 ms.
inline constexpr std::array<int, 11> kSparseShifts = {13, 15, 16, 17, 18, 19,
                                                      20, 22, 24, 26, 28};
inline constexpr size_t kSparseFinite = kSparseShifts.size();
inline constexpr size_t kSparseBuckets = kSparseFinite + 1;

// The coarse bucket whose bound is sparse bucket j's (the +Inf one for the
// last).
constexpr size_t SparseToCoarse(size_t j) {
  if (j >= kSparseFinite) return kCoarseFinite;
  return static_cast<size_t>(kSparseShifts[j] - kCoarseMinShift);
}
static_assert(kSparseShifts.front() >= kCoarseMinShift &&
              kSparseShifts.back() <= kCoarseMaxShift);

// le of coarse bucket j in seconds (+inf for the last).
double CoarseUpperBoundSeconds(size_t j);

// The coarse cumulative counts of `h`: [j] is the number of observations
// <= CoarseUpperBoundSeconds(j); the last is h.Count().
std::array<uint64_t, kCoarseBuckets> CoarseCumulative(
    const model::LatencyHistogram& h);

// le of sparse bucket j in seconds (+inf for the last).
double SparseUpperBoundSeconds(size_t j);

// The sparse cumulative counts of `h` (as CoarseCumulative).
std::array<uint64_t, kSparseBuckets> SparseCumulative(
    const model::LatencyHistogram& h);

// The native schema, and the zero bucket's width in seconds (kernel slot
// 0's upper bound).
inline constexpr int32_t kNativeSchema = 2;
double NativeZeroThresholdSeconds();

// The native bucket index (schema kNativeSchema: bucket i holds
// (2^((i-1)/4), 2^(i/4)] seconds) that kernel slot `slot` (1 <= slot <
// kBuckets) is counted in.
int32_t NativeBucketOfKernelSlot(size_t slot);

// A native histogram as the exposition format carries it: populated
// buckets only, as spans of consecutive indexes and count deltas.
struct NativeHistogram {
  struct Span {
    int32_t offset;  // gap after the previous span (the first: its index)
    uint32_t length;
  };
  uint64_t zero_count = 0;
  std::vector<Span> spans;
  std::vector<int64_t> deltas;  // count minus the previous bucket's count
};

// The native histogram of kernel-layout cumulative counts (`cumulative` has
// model::LatencyHistogram::kBuckets entries, as in Cumulative()).
NativeHistogram ToNative(std::span<const uint64_t> cumulative);

}  // namespace pathwise::exporters

#endif  // PATHWISE_EXPORTERS_HISTOGRAM_EXPOSITION_H_

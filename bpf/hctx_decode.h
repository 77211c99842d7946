// SPDX-License-Identifier: Apache-2.0
// Decoding of the per hardware context maps of the block object
// (pathwise_block.bpf.c with the `queues` switch: pw_hctx_slot, a disk's
// range of slots, and pw_hctx, per-CPU statistics per slot), on byte
// buffers only, like map_decode.h: sizes are checked, a range that does not
// fit the slots is an error, sums over CPUs saturate.
#ifndef PATHWISE_BPF_HCTX_DECODE_H_
#define PATHWISE_BPF_HCTX_DECODE_H_

#include <array>
#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "model/histogram.h"

namespace pathwise::bpf {

// The coarse latency layout of pw_hctx_val (PW_QHIST_*): bucket j has
// le = 2^(12 + j) ns for j < 24, then +Inf.
inline constexpr size_t kHctxBuckets = 25;
inline constexpr int kHctxMinShift = 12;

// The fine histogram slot whose upper bound is coarse bucket j's (the +Inf
// slot for the last): 2^k ns is the bound of fine slot 4 (k - 10).
constexpr size_t HctxBucketToFineSlot(size_t j) {
  return j + 1 >= kHctxBuckets ? model::LatencyHistogram::kBuckets - 1
                               : 4 * static_cast<size_t>(kHctxMinShift - 10 +
                                                         static_cast<int>(j));
}

// A pw_hctx slot summed over CPUs.
struct HctxTotals {
  uint64_t count = 0;
  uint64_t lat_sum_ns = 0;
  uint64_t remote = 0;  // completed on a CPU other than the submitting one
  std::array<uint64_t, kHctxBuckets> buckets{};  // non-cumulative
};

// A disk's range of pw_hctx slots (pw_hctx_slot value).
struct HctxRange {
  uint32_t base = 0;
  uint32_t n = 0;  // 0: no slots
  bool ready = false;
};

// pw_hctx_slot's value; an error when its size is not the layout's or the
// range does not fit `slots`.
absl::StatusOr<HctxRange> DecodeHctxRange(absl::Span<const uint8_t> value,
                                          uint32_t slots);

// One pw_hctx index: ncpus copies of pw_hctx_val, summed (saturating, each
// saturation counted in `saturated`).
absl::StatusOr<HctxTotals> SumHctxSlot(absl::Span<const uint8_t> values,
                                       int ncpus, uint64_t& saturated);

// The totals as a fine-layout histogram (each coarse count at its bound's
// fine slot), so that quantiles and the coarse exposition read it as is.
model::LatencyHistogram HctxHistogram(const HctxTotals& t);

}  // namespace pathwise::bpf

#endif  // PATHWISE_BPF_HCTX_DECODE_H_

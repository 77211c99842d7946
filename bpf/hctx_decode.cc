// SPDX-License-Identifier: Apache-2.0
#include "bpf/hctx_decode.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "bpf/saturating.h"

extern "C" {
#include "bpf/pathwise_bpf.h"
}

namespace pathwise::bpf {
namespace {

static_assert(kHctxBuckets == PW_QHIST_BUCKETS);
static_assert(kHctxMinShift == PW_QHIST_MIN_SHIFT);
static_assert(sizeof(pw_hctx_val::buckets) / sizeof(__u64) == kHctxBuckets);
static_assert(model::LatencyHistogram::UpperBoundNs(HctxBucketToFineSlot(0)) ==
              uint64_t{1} << kHctxMinShift);
static_assert(model::LatencyHistogram::UpperBoundNs(
                  HctxBucketToFineSlot(kHctxBuckets - 2)) == uint64_t{1} << 35);

}  // namespace

absl::StatusOr<HctxRange> DecodeHctxRange(absl::Span<const uint8_t> value,
                                          uint32_t slots) {
  if (value.size() != sizeof(pw_hctx_range)) {
    return absl::InvalidArgumentError(
        absl::StrCat("pw_hctx_slot: value of ", value.size(),
                     " bytes, the layout's is ", sizeof(pw_hctx_range)));
  }
  pw_hctx_range r;
  std::memcpy(&r, value.data(), sizeof(r));
  if (r.n > slots || r.base > slots - r.n) {
    return absl::InvalidArgumentError(
        absl::StrCat("pw_hctx_slot: range [", r.base, ", +", r.n,
                     ") outside the ", slots, " slots"));
  }
  return HctxRange{r.base, r.n, r.ready != 0};
}

absl::StatusOr<HctxTotals> SumHctxSlot(absl::Span<const uint8_t> values,
                                       int ncpus, uint64_t& saturated) {
  constexpr size_t kStride = (sizeof(pw_hctx_val) + 7) / 8 * 8;
  if (ncpus <= 0 || values.size() != static_cast<size_t>(ncpus) * kStride) {
    return absl::InvalidArgumentError(
        absl::StrCat("pw_hctx: per-CPU value of ", values.size(), " bytes for ",
                     ncpus, " CPUs of ", kStride));
  }
  HctxTotals t;
  for (size_t off = 0; off < values.size(); off += kStride) {
    pw_hctx_val v;
    std::memcpy(&v, values.data() + off, sizeof(v));
    SatAdd(t.count, v.count, saturated);
    SatAdd(t.lat_sum_ns, v.lat_sum_ns, saturated);
    SatAdd(t.remote, v.remote, saturated);
    for (size_t j = 0; j < kHctxBuckets; ++j) {
      SatAdd(t.buckets[j], v.buckets[j], saturated);
    }
  }
  return t;
}

model::LatencyHistogram HctxHistogram(const HctxTotals& t) {
  model::LatencyHistogram h;
  for (size_t j = 0; j < kHctxBuckets; ++j) {
    h.AddToBucket(HctxBucketToFineSlot(j), t.buckets[j]);
  }
  return h;
}

}  // namespace pathwise::bpf

// SPDX-License-Identifier: Apache-2.0
// The per hardware queue layout: the kernel side's coarse bucketing against
// the fine histogram's bounds, the decoding of pw_hctx_slot and pw_hctx
// (sizes, ranges, sums over CPUs, saturation) and the fine-layout view of
// the coarse counts (folded back by the exporters' coarse exposition).
#include "bpf/hctx_decode.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "exporters/histogram_exposition.h"
#include "model/histogram.h"

extern "C" {
#include "bpf/pathwise_bpf.h"
#include "bpf/pathwise_hist.h"
}

namespace pathwise::bpf {
namespace {

using H = model::LatencyHistogram;

// Coarse bucket j's inclusive upper bound in ns (+Inf for the last).
uint64_t CoarseUpper(size_t j) {
  return j + 1 < kHctxBuckets ? uint64_t{1} << (kHctxMinShift + j)
                              : H::kInfinite;
}

TEST(HctxBuckets, EveryFineSlotFallsInTheCoarseBucketOfItsBound) {
  for (uint32_t i = 0; i < H::kBuckets; ++i) {
    const uint32_t j = pw_qhist_bucket(i);
    ASSERT_LT(j, kHctxBuckets) << "slot " << i;
    // Every latency of fine slot i is <= its bound <= coarse bound j, and
    // above coarse bound j - 1 (the fine bounds refine the coarse ones).
    EXPECT_LE(H::UpperBoundNs(i), CoarseUpper(j)) << "slot " << i;
    if (j > 0) EXPECT_GT(H::UpperBoundNs(i), CoarseUpper(j - 1)) << i;
  }
  EXPECT_EQ(pw_qhist_bucket(0), 0u);
  EXPECT_EQ(pw_qhist_bucket(8), 0u);  // le = 4096 ns
  EXPECT_EQ(pw_qhist_bucket(9), 1u);
  EXPECT_EQ(pw_qhist_bucket(100), 23u);  // le = 2^35 ns
  EXPECT_EQ(pw_qhist_bucket(101), 24u);  // +Inf
  EXPECT_EQ(pw_qhist_bucket(H::kBuckets - 1), 24u);
}

TEST(HctxBuckets, FineViewFoldsBackToTheSameCoarseCounts) {
  HctxTotals t;
  for (size_t j = 0; j < kHctxBuckets; ++j) t.buckets[j] = j * 3 + 1;
  const H h = HctxHistogram(t);
  const auto coarse = exporters::CoarseCumulative(h);
  uint64_t cumulative = 0;
  for (size_t j = 0; j < kHctxBuckets; ++j) {
    cumulative += t.buckets[j];
    EXPECT_EQ(coarse[j], cumulative) << "bucket " << j;
  }
  EXPECT_EQ(h.Count(), cumulative);
}

std::vector<uint8_t> Bytes(const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  return std::vector<uint8_t>(b, b + n);
}

TEST(HctxRange, DecodedAndCheckedAgainstTheSlots) {
  pw_hctx_range r = {.base = 4, .n = 2, .ready = 1, .pad = 0};
  absl::StatusOr<HctxRange> d = DecodeHctxRange(Bytes(&r, sizeof(r)), 8);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->base, 4u);
  EXPECT_EQ(d->n, 2u);
  EXPECT_TRUE(d->ready);
  EXPECT_FALSE(DecodeHctxRange(Bytes(&r, sizeof(r)), 5).ok());
  r.base = UINT32_MAX;  // base + n would wrap
  EXPECT_FALSE(DecodeHctxRange(Bytes(&r, sizeof(r)), 8).ok());
  EXPECT_FALSE(DecodeHctxRange(Bytes(&r, sizeof(r) - 1), 8).ok());
  r = {.base = 0, .n = 0, .ready = 0, .pad = 0};
  d = DecodeHctxRange(Bytes(&r, sizeof(r)), 8);
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->ready);
}

TEST(HctxSlot, SummedOverCpusSaturating) {
  constexpr size_t kStride = (sizeof(pw_hctx_val) + 7) / 8 * 8;
  std::vector<uint8_t> buf(3 * kStride, 0);
  for (int cpu = 0; cpu < 3; ++cpu) {
    pw_hctx_val v = {};
    v.count = 10 + cpu;
    v.lat_sum_ns = cpu == 2 ? UINT64_MAX : 1000;
    v.remote = cpu;
    v.buckets[3] = 10 + cpu;
    std::memcpy(buf.data() + cpu * kStride, &v, sizeof(v));
  }
  uint64_t saturated = 0;
  absl::StatusOr<HctxTotals> t = SumHctxSlot(buf, 3, saturated);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->count, 33u);
  EXPECT_EQ(t->remote, 3u);
  EXPECT_EQ(t->buckets[3], 33u);
  EXPECT_EQ(t->lat_sum_ns, UINT64_MAX);
  EXPECT_EQ(saturated, 1u);
  EXPECT_FALSE(SumHctxSlot(buf, 2, saturated).ok());
  EXPECT_FALSE(SumHctxSlot(buf, 0, saturated).ok());
}

}  // namespace
}  // namespace pathwise::bpf

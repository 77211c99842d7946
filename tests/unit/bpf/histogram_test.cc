// SPDX-License-Identifier: Apache-2.0
#include "model/histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <random>
#include <vector>

extern "C" {
#include "bpf/pathwise_hist.h"
}

namespace pathwise::model {
namespace {

using H = LatencyHistogram;

// Reference bucketing straight from the definition of `le`: the first
// bucket whose inclusive upper bound is >= v.
size_t ReferenceBucket(uint64_t v) {
  for (size_t i = 0; i < H::kFiniteBuckets; ++i) {
    if (v <= H::UpperBoundNs(i)) return i;
  }
  return H::kBuckets - 1;
}

TEST(HistogramEdges, KnownBounds) {
  EXPECT_EQ(H::UpperBoundNs(0), 1024u);
  EXPECT_EQ(H::UpperBoundNs(1), 1280u);
  EXPECT_EQ(H::UpperBoundNs(2), 1536u);
  EXPECT_EQ(H::UpperBoundNs(3), 1792u);
  EXPECT_EQ(H::UpperBoundNs(4), 2048u);
  EXPECT_EQ(H::UpperBoundNs(5), 2560u);
  EXPECT_EQ(H::UpperBoundNs(H::kFiniteBuckets - 1), uint64_t{1} << 36);
  EXPECT_EQ(H::UpperBoundNs(H::kBuckets - 1), H::kInfinite);
  EXPECT_TRUE(std::isinf(H::UpperBoundSeconds(H::kBuckets - 1)));
  EXPECT_DOUBLE_EQ(H::UpperBoundSeconds(0), 1.024e-6);
}

TEST(HistogramEdges, CoversOneMicrosecondToOverSixtySeconds) {
  EXPECT_LE(H::UpperBoundNs(0), 1100u);  // ~1 us resolution at the bottom
  EXPECT_GT(H::UpperBoundSeconds(H::kFiniteBuckets - 1), 60.0);
  // Something finite below 60 s too: 60 s itself is not lumped into +Inf.
  EXPECT_LT(H::BucketFor(60'000'000'000ull), H::kFiniteBuckets);
}

TEST(HistogramEdges, StrictlyIncreasingAndAtLeastFourPerOctave) {
  for (size_t i = 1; i < H::kFiniteBuckets; ++i) {
    EXPECT_LT(H::UpperBoundNs(i - 1), H::UpperBoundNs(i)) << i;
  }
  // Each power of two above 1.024 us is split into >= 4 buckets: the
  // bound 4 buckets later is at most twice as large.
  for (size_t i = 0; i + 4 < H::kFiniteBuckets; ++i) {
    EXPECT_LE(H::UpperBoundNs(i + 4), 2 * H::UpperBoundNs(i)) << i;
  }
}

TEST(HistogramEdges, BoundsAreInclusive) {
  // Prometheus `le`: v == bound is in that bucket, bound + 1 in the next.
  for (size_t i = 0; i < H::kFiniteBuckets; ++i) {
    const uint64_t b = H::UpperBoundNs(i);
    EXPECT_EQ(H::BucketFor(b), i) << "bound " << b;
    EXPECT_EQ(H::BucketFor(b + 1), i + 1) << "bound+1 " << b + 1;
    if (i > 0) {
      EXPECT_EQ(H::BucketFor(H::UpperBoundNs(i - 1) + 1), i);
    }
  }
}

TEST(HistogramEdges, PowersOfTwoLandInTheirOwnLeBucket) {
  // floor(log2(v)) bucketing would put v = 2^k into the bucket labelled
  // le=2^(k+1), an off-by-one against `le`. Here 2^k goes to le=2^k.
  for (int k = PW_HIST_MIN_SHIFT; k <= PW_HIST_MAX_SHIFT; ++k) {
    const uint64_t v = uint64_t{1} << k;
    EXPECT_EQ(H::UpperBoundNs(H::BucketFor(v)), v) << "k=" << k;
  }
}

TEST(HistogramEdges, SmallAndHugeValues) {
  EXPECT_EQ(H::BucketFor(0), 0u);
  EXPECT_EQ(H::BucketFor(1), 0u);
  EXPECT_EQ(H::BucketFor(1024), 0u);
  EXPECT_EQ(H::BucketFor(1025), 1u);
  EXPECT_EQ(H::BucketFor((uint64_t{1} << 36) + 1), H::kBuckets - 1);
  EXPECT_EQ(H::BucketFor(~uint64_t{0}), H::kBuckets - 1);
}

TEST(HistogramEdges, MatchesReferenceOnRandomValues) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 200000; ++i) {
    // Log-uniform over [1, 2^40).
    const int bits = static_cast<int>(rng() % 40) + 1;
    const uint64_t v = (rng() & ((uint64_t{1} << bits) - 1)) + 1;
    ASSERT_EQ(H::BucketFor(v), ReferenceBucket(v)) << v;
  }
}

TEST(HistogramEdges, Log2MatchesBitWidth) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 100000; ++i) {
    const uint64_t v = (rng() >> (rng() % 64)) | 1;
    ASSERT_EQ(pw_log2_u64(v), static_cast<uint32_t>(std::bit_width(v) - 1));
  }
  for (int k = 0; k < 64; ++k) {
    EXPECT_EQ(pw_log2_u64(uint64_t{1} << k), static_cast<uint32_t>(k));
  }
}

TEST(HistogramMerge, MergeEqualsHistogramOfUnion) {
  std::mt19937_64 rng(1);
  H a, b, all;
  for (int i = 0; i < 5000; ++i) {
    const uint64_t v = rng() % 100'000'000;
    (i % 3 ? a : b).Observe(v);
    all.Observe(v);
  }
  H merged = a;
  merged.Merge(b);
  EXPECT_EQ(merged, all);
  EXPECT_EQ(merged.Count(), 5000u);
  // Commutative and associative (pure per-bucket sums).
  H other = b;
  other.Merge(a);
  EXPECT_EQ(other, merged);
}

TEST(HistogramMerge, HeadQuantileFromMergedPaths) {
  // Two paths: one fast (~100 us), one slow (~30 ms); the head's median
  // must come from the merged histogram, not an average of medians.
  H fast, slow;
  fast.Observe(100'000, 900);
  slow.Observe(30'000'000, 100);
  H head = fast;
  head.Merge(slow);
  EXPECT_EQ(head.Count(), 1000u);
  EXPECT_LT(head.Quantile(0.5), 0.000200);
  EXPECT_GE(head.Quantile(0.95), 0.025);
  EXPECT_LE(head.Quantile(0.95), 0.035);
}

TEST(HistogramCumulative, LastIsCountAndMonotonic) {
  H h;
  h.Observe(10, 3);
  h.Observe(5'000, 2);
  h.Observe(uint64_t{1} << 40, 1);  // +Inf
  const auto c = h.Cumulative();
  EXPECT_EQ(c.back(), h.Count());
  EXPECT_EQ(c[0], 3u);
  EXPECT_EQ(c[H::kFiniteBuckets - 1], 5u);
  EXPECT_TRUE(std::is_sorted(c.begin(), c.end()));
}

TEST(HistogramQuantile, InterpolatesLikePrometheus) {
  H h;
  EXPECT_TRUE(std::isnan(h.Quantile(0.5)));
  // 100 observations all in bucket (1024, 1280] ns.
  h.Observe(1200, 100);
  const double lo = H::UpperBoundSeconds(0), hi = H::UpperBoundSeconds(1);
  EXPECT_NEAR(h.Quantile(0.5), lo + (hi - lo) * 0.5, 1e-15);
  EXPECT_NEAR(h.Quantile(1.0), hi, 1e-15);
  // Rank in +Inf: the last finite bound, as histogram_quantile() does.
  H inf;
  inf.Observe(~uint64_t{0});
  EXPECT_DOUBLE_EQ(inf.Quantile(0.5),
                   H::UpperBoundSeconds(H::kFiniteBuckets - 1));
}

TEST(HistogramKernel, BucketingIsTheKernelProgramsCode) {
  // The model's layout and bpf/pathwise_hist.h (what the BPF programs run)
  // must bucket every latency alike and publish the same bounds.
  for (size_t i = 0; i < H::kFiniteBuckets; ++i) {
    ASSERT_EQ(H::UpperBoundNs(i), pw_hist_upper_ns(static_cast<__u32>(i))) << i;
    const uint64_t b = H::UpperBoundNs(i);
    ASSERT_EQ(H::BucketFor(b), pw_hist_bucket(b)) << b;
    ASSERT_EQ(H::BucketFor(b + 1), pw_hist_bucket(b + 1)) << b + 1;
  }
  std::mt19937_64 rng(3);
  for (int i = 0; i < 200000; ++i) {
    const uint64_t v = rng() >> (rng() % 64);
    ASSERT_EQ(H::BucketFor(v), pw_hist_bucket(v)) << v;
  }
  EXPECT_EQ(H::kBuckets, static_cast<size_t>(PW_HIST_BUCKETS));
}

TEST(HistogramDelta, DeltaOfSnapshotsIsTheWindowsObservations) {
  H before, window;
  before.Observe(5'000, 10);
  before.Observe(2'000'000, 3);
  window.Observe(5'000, 4);
  window.Observe(80'000'000, 1);
  H after = before;
  after.Merge(window);
  EXPECT_EQ(after.Delta(before), window);
  EXPECT_EQ(after.Delta(after).Count(), 0u);
  // A source that restarted (a bucket went backwards) adds nothing there.
  H restarted;
  restarted.Observe(5'000, 2);
  EXPECT_EQ(restarted.Delta(before).Count(), 0u);
}

TEST(HistogramLayout, AFinerLayoutIsTheSameType) {
  // 8 sub-buckets per octave from 128 ns: a template argument, not a copy.
  using Fine = BasicLatencyHistogram<LogLinearLayout<3, 7, 36>>;
  EXPECT_EQ(Fine::kBuckets, 1 + 29 * 8 + 1u);
  EXPECT_EQ(Fine::UpperBoundNs(0), 128u);
  EXPECT_EQ(Fine::UpperBoundNs(1), 144u);
  for (size_t i = 0; i < Fine::kFiniteBuckets; ++i) {
    EXPECT_EQ(Fine::BucketFor(Fine::UpperBoundNs(i)), i);
    EXPECT_EQ(Fine::BucketFor(Fine::UpperBoundNs(i) + 1), i + 1);
  }
  Fine f;
  f.Observe(1000, 10);
  EXPECT_LE(f.Quantile(0.5), 1.024e-6);
  EXPECT_GE(f.Quantile(0.5), 0.896e-6);
}

}  // namespace
}  // namespace pathwise::model

// SPDX-License-Identifier: Apache-2.0
#include "model/delta.h"

#include <cmath>

#include "gtest/gtest.h"
#include "model/histogram.h"
#include "model/synthetic.h"
#include "model/types.h"

namespace pathwise::model {
namespace {

OpStats Reads(uint64_t n, uint64_t each_ns, uint64_t bytes_each) {
  OpStats s;
  s.completed = n;
  s.bytes = n * bytes_each;
  s.time_ns = n * each_ns;
  s.errors = 0;
  s.latency.emplace();
  s.latency->Observe(each_ns, n);
  return s;
}

TEST(Delta, CountersAndHistogramOfTheWindow) {
  OpStats before = Reads(100, 50'000, 4096);
  OpStats window = Reads(40, 2'000'000, 8192);
  *window.errors = 3;
  OpStats after = before;
  after.Merge(window);
  EXPECT_EQ(Delta(after, before), window);
}

TEST(Delta, CounterGoingBackwardsContributesNothing) {
  OpStats before = Reads(100, 50'000, 4096);
  OpStats after = Reads(10, 50'000, 4096);  // the device was re-created
  const OpStats d = Delta(after, before);
  EXPECT_EQ(d.completed, 0u);
  EXPECT_EQ(d.bytes, 0u);
  EXPECT_EQ(d.latency->Count(), 0u);
}

TEST(Rates, IopsBandwidthMeanAndQuantiles) {
  const OpRates r = RatesOf(Reads(400, 250'000, 4096), 2.0);
  EXPECT_EQ(r.completed, 400u);
  EXPECT_DOUBLE_EQ(r.iops, 200.0);
  EXPECT_DOUBLE_EQ(r.bytes_per_second, 200.0 * 4096);
  ASSERT_TRUE(r.mean_latency_seconds.has_value());
  EXPECT_DOUBLE_EQ(*r.mean_latency_seconds, 250e-6);
  // Every observation is in the bucket holding 250 us: the median lies
  // inside it.
  const size_t b = LatencyHistogram::BucketFor(250'000);
  EXPECT_GT(r.LatencyQuantile(0.5), LatencyHistogram::UpperBoundSeconds(b - 1));
  EXPECT_LE(r.LatencyQuantile(0.5), LatencyHistogram::UpperBoundSeconds(b));
}

TEST(Rates, NoIoHasNoMeanAndNoQuantile) {
  OpStats idle;
  const OpRates r = RatesOf(idle, 1.0);
  EXPECT_EQ(r.iops, 0);
  EXPECT_FALSE(r.mean_latency_seconds.has_value());
  EXPECT_TRUE(std::isnan(r.LatencyQuantile(0.99)));
}

TEST(Rates, BetweenSnapshotsPerPathAndOp) {
  Snapshot a = MakeSyntheticSnapshot({});
  a.collected_at = absl::FromUnixSeconds(1000);
  Snapshot b = a;
  b.collected_at = absl::FromUnixSeconds(1010);
  const std::string path = a.topology.paths[0].name;
  OpStats& read = *b.path_io[path].op(Op::kRead);
  read.completed += 5000;
  read.bytes += 5000 * 4096;
  read.time_ns += 5000 * 100'000;

  std::optional<SnapshotRates> r = RatesBetween(a, b);
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(r->seconds, 10.0);
  const IoRates& p = r->paths.at(path);
  ASSERT_TRUE(p.op(Op::kRead).has_value());
  EXPECT_DOUBLE_EQ(p.op(Op::kRead)->iops, 500.0);
  EXPECT_DOUBLE_EQ(p.op(Op::kRead)->bytes_per_second, 500.0 * 4096);
  EXPECT_DOUBLE_EQ(*p.op(Op::kRead)->mean_latency_seconds, 100e-6);
  EXPECT_FALSE(p.op(Op::kRead)->latency.has_value());  // sysfs: no histogram
  EXPECT_DOUBLE_EQ(p.op(Op::kWrite)->iops, 0.0);
  EXPECT_FALSE(p.op(Op::kPassthru).has_value());
  EXPECT_EQ(r->heads.size(), a.head_io.size());

  EXPECT_FALSE(RatesBetween(b, a).has_value());  // not later
  EXPECT_FALSE(RatesBetween(a, a).has_value());
}

}  // namespace
}  // namespace pathwise::model

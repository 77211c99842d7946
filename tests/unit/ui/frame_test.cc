// SPDX-License-Identifier: Apache-2.0
// ui/frame: rates, window quantiles and counters between two snapshots;
// sorting and filtering.
#include "ui/frame.h"

#include "gtest/gtest.h"
#include "tests/unit/ui/test_snapshots.h"

namespace pathwise::ui {
namespace {

using testing::kMs;
using testing::kUs;

const PathRow& PathOf(const Frame& f, const std::string& name) {
  for (const PathRow& p : f.paths) {
    if (p.path == name) return p;
  }
  ADD_FAILURE() << "no path " << name;
  static const PathRow none;
  return none;
}

const ControllerRow& ControllerOf(const Frame& f, const std::string& name) {
  for (const ControllerRow& c : f.controllers) {
    if (c.controller == name) return c;
  }
  ADD_FAILURE() << "no controller " << name;
  static const ControllerRow none;
  return none;
}

std::vector<std::string> PathNames(const Frame& f) {
  std::vector<std::string> out;
  for (const PathRow& p : f.paths) out.push_back(p.path);
  return out;
}

TEST(FrameTest, RatesAndWindowQuantiles) {
  const auto [a, b] = testing::MakeSnapshotPair();
  const Frame f = BuildFrame(&a, b);
  EXPECT_EQ(f.generation, 42u);
  EXPECT_DOUBLE_EQ(f.interval_seconds, 2.0);
  const PathRow& fast = PathOf(f, "nvme0c0n1");
  EXPECT_DOUBLE_EQ(fast.read.iops, 1000);
  EXPECT_DOUBLE_EQ(fast.read.mib_per_second, 2000 * 4096 / 2.0 / 1048576);
  // The window's histogram alone: 1000 reads of 100 us, 1000 of 2 ms (the
  // thousands of older reads before the window do not count).
  model::LatencyHistogram window;
  window.Observe(100 * kUs, 1000);
  window.Observe(2 * kMs, 1000);
  ASSERT_TRUE(fast.read.p50 && fast.read.p99);
  EXPECT_DOUBLE_EQ(*fast.read.p50, window.Quantile(0.5));
  EXPECT_DOUBLE_EQ(*fast.read.p99, window.Quantile(0.99));
  EXPECT_LT(*fast.read.p50, 120e-6);
  EXPECT_GT(*fast.read.p99, 1.5e-3);
  EXPECT_DOUBLE_EQ(*fast.read.mean, 1.05e-3);
  EXPECT_EQ(fast.ana_state, "optimized");
  EXPECT_EQ(fast.transport, "tcp");
  EXPECT_EQ(fast.address, "10.0.0.1:4420");
  EXPECT_EQ(fast.health, model::PathHealth::kHealthy);
  EXPECT_EQ(fast.weight_read, 62u);

  const PathRow& slow = PathOf(f, "nvme0c1n1");
  EXPECT_DOUBLE_EQ(slow.read.iops, 100);
  EXPECT_GT(*slow.read.p50, 25e-3);
  EXPECT_LT(*slow.read.p99, 34e-3);  // the 30 ms bucket ends at 33.55 ms
  EXPECT_EQ(slow.health, model::PathHealth::kDegraded);
  EXPECT_DOUBLE_EQ(*slow.ewma_read, 0.0301);
  EXPECT_EQ(slow.ana_state, "non-optimized");

  // Writes without a histogram (the sysfs fallback's kind): rates and the
  // mean only.
  const PathRow& writer = PathOf(f, "nvme1c2n1");
  EXPECT_DOUBLE_EQ(writer.write.iops, 300);
  EXPECT_DOUBLE_EQ(writer.write.mib_per_second, 18.75);
  EXPECT_FALSE(writer.write.p50.has_value());
  EXPECT_DOUBLE_EQ(*writer.write.mean, 1e-3);

  const PathRow& idle = PathOf(f, "nvme1c3n1");
  EXPECT_EQ(idle.read.iops, 0);
  EXPECT_FALSE(idle.read.p99.has_value());
  EXPECT_FALSE(idle.read.mean.has_value());
  EXPECT_FALSE(idle.ewma_read.has_value());
}

TEST(FrameTest, FailoversAndErrorsTotalAndInterval) {
  const auto [a, b] = testing::MakeSnapshotPair();
  const Frame f = BuildFrame(&a, b);
  // The sampler's failovers; its errors by class summed.
  const PathRow& p0 = PathOf(f, "nvme0c0n1");
  ASSERT_TRUE(p0.failovers && p0.errors);
  EXPECT_EQ(p0.failovers->total, 3u);
  EXPECT_EQ(p0.failovers->interval, 2u);
  EXPECT_EQ(p0.errors->total, 0u);
  const PathRow& p1 = PathOf(f, "nvme0c1n1");
  EXPECT_EQ(p1.errors->total, 5u);
  EXPECT_EQ(p1.errors->interval, 5u);
  // The kernel's diag/ counters where the sampler has none.
  const PathRow& p2 = PathOf(f, "nvme1c2n1");
  ASSERT_TRUE(p2.failovers && p2.errors);
  EXPECT_EQ(p2.failovers->total, 7u);
  EXPECT_EQ(p2.failovers->interval, 0u);
  EXPECT_EQ(p2.errors->total, 4u);
  EXPECT_EQ(p2.errors->interval, 3u);
  // Neither source: unknown, not zero.
  EXPECT_FALSE(PathOf(f, "nvme1c3n1").failovers.has_value());
}

TEST(FrameTest, ControllersHeadsSubsystemsDevices) {
  const auto [a, b] = testing::MakeSnapshotPair();
  const Frame f = BuildFrame(&a, b);
  const ControllerRow& c0 = ControllerOf(f, "nvme0");
  EXPECT_EQ(c0.paths, 1);
  EXPECT_DOUBLE_EQ(c0.read_iops, 1000);
  EXPECT_EQ(c0.resets->total, 2u);
  EXPECT_EQ(c0.resets->interval, 1u);
  EXPECT_EQ(c0.reconnects->interval, 1u);
  EXPECT_EQ(c0.errors->interval, 0u);
  model::LatencyHistogram probes;
  probes.Observe(80 * kUs, 10);
  EXPECT_DOUBLE_EQ(*c0.probe_p50, probes.Quantile(0.5));
  EXPECT_EQ(c0.probe_failures->total, 0u);
  const ControllerRow& c3 = ControllerOf(f, "nvme3");
  EXPECT_TRUE(c3.unreachable);
  EXPECT_EQ(c3.probe_failures->interval, 2u);
  EXPECT_FALSE(c3.probe_p50.has_value());  // no probe answered in the window
  EXPECT_FALSE(ControllerOf(f, "nvme1").probe_failures.has_value());

  ASSERT_EQ(f.heads.size(), 2u);
  EXPECT_EQ(f.heads[0].paths, 2);
  EXPECT_EQ(
      f.heads[0].paths_by_health[model::Index(model::PathHealth::kDegraded)],
      1);
  EXPECT_DOUBLE_EQ(*f.heads[0].imbalance, 28.7);

  ASSERT_EQ(f.subsystems.size(), 2u);
  EXPECT_EQ(f.subsystems[0].iopolicy, "round-robin");
  EXPECT_EQ(f.subsystems[0].recommended, "queue-depth");
  EXPECT_EQ(f.subsystems[0].decision,
            "dry_run round-robin -> queue-depth at 14:13:21Z: advised for 30s");
  EXPECT_EQ(f.subsystems[1].decision, "");
  ASSERT_EQ(f.failed_collectors.size(), 1u);
  EXPECT_EQ(f.failed_collectors[0],
            "collector probe: io_uring: no such device");

  ASSERT_EQ(f.devices.size(), 1u);
  EXPECT_DOUBLE_EQ(f.devices[0].read.iops, 2500);
}

TEST(FrameTest, NoIntervalWithoutAnEarlierCollection) {
  const auto [a, b] = testing::MakeSnapshotPair();
  for (const Frame& f : {BuildFrame(nullptr, b), BuildFrame(&b, b)}) {
    EXPECT_EQ(f.interval_seconds, 0);
    const PathRow& p = PathOf(f, "nvme0c0n1");
    EXPECT_EQ(p.read.iops, 0);
    EXPECT_FALSE(p.read.p50.has_value());
    EXPECT_EQ(p.failovers->total, 3u);
    EXPECT_EQ(p.failovers->interval, 0u);
  }
}

TEST(FrameTest, SortKeys) {
  const auto [a, b] = testing::MakeSnapshotPair();
  Frame f = BuildFrame(&a, b);
  EXPECT_EQ(PathNames(f), (std::vector<std::string>{"nvme0c0n1", "nvme0c1n1",
                                                    "nvme1c2n1", "nvme1c3n1"}));
  SortFrame(f, SortKey::kHealth);
  EXPECT_EQ(PathNames(f), (std::vector<std::string>{"nvme0c1n1", "nvme1c3n1",
                                                    "nvme0c0n1", "nvme1c2n1"}));
  SortFrame(f, SortKey::kReadIops);
  EXPECT_EQ(PathNames(f), (std::vector<std::string>{"nvme1c2n1", "nvme0c0n1",
                                                    "nvme0c1n1", "nvme1c3n1"}));
  SortFrame(f, SortKey::kReadP99);
  EXPECT_EQ(PathNames(f)[0], "nvme0c1n1");
  EXPECT_EQ(PathNames(f)[3], "nvme1c3n1");  // unknown last
  SortFrame(f, SortKey::kErrors);
  EXPECT_EQ(PathNames(f)[0], "nvme0c1n1");
  SortFrame(f, SortKey::kWriteIops);
  EXPECT_EQ(PathNames(f)[0], "nvme1c2n1");
  SortFrame(f, SortKey::kName);
  EXPECT_EQ(PathNames(f)[0], "nvme0c0n1");
  EXPECT_EQ(f.controllers[0].controller, "nvme0");
  SortFrame(f, SortKey::kHealth);
  EXPECT_EQ(f.controllers[0].controller, "nvme3");  // unreachable first

  for (SortKey k : kAllSortKeys) {
    EXPECT_EQ(ParseSortKey(SortKeyName(k)), k);
  }
  EXPECT_FALSE(ParseSortKey("speed").has_value());
}

TEST(FrameTest, Filter) {
  const auto [a, b] = testing::MakeSnapshotPair();
  Frame f = BuildFrame(&a, b);
  FilterFrame(f, "c2");
  EXPECT_EQ(PathNames(f), std::vector<std::string>{"nvme1c2n1"});
  ASSERT_EQ(f.heads.size(), 1u);
  EXPECT_EQ(f.heads[0].head, "nvme1n1");
  ASSERT_EQ(f.subsystems.size(), 1u);
  EXPECT_EQ(f.subsystems[0].subsystem, "nvme-subsys1");
  EXPECT_TRUE(f.devices.empty());

  Frame by_address = BuildFrame(&a, b);
  FilterFrame(by_address, "10.1.1.1");
  EXPECT_EQ(PathNames(by_address), std::vector<std::string>{"nvme1c3n1"});
  ASSERT_EQ(by_address.controllers.size(), 1u);
  EXPECT_EQ(by_address.controllers[0].controller, "nvme3");

  Frame all = BuildFrame(&a, b);
  FilterFrame(all, "");
  EXPECT_EQ(all.paths.size(), 4u);
  Frame none = BuildFrame(&a, b);
  FilterFrame(none, "zzz");
  EXPECT_TRUE(none.paths.empty());
  EXPECT_TRUE(none.subsystems.empty());
}

}  // namespace
}  // namespace pathwise::ui

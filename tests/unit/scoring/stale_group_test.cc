// SPDX-License-Identifier: Apache-2.0
// An op group's EWMA that nothing refreshes stops speaking for its path: a
// slow write during a delay must not hold the path degraded, or its head
// asymmetric, once the reads have long come back.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "scoring/scoring.h"

namespace pathwise::scoring {
namespace {

constexpr int kRead = static_cast<int>(model::OpGroup::kRead);
constexpr int kWrite = static_cast<int>(model::OpGroup::kWrite);
constexpr uint64_t kMs = 1'000'000;

PathWindow Window(const std::string& path, uint64_t read_ns,
                  uint64_t write_ns = 0) {
  PathWindow w;
  w.path = path;
  w.ops[kRead] = {20, 20 * read_ns};
  if (write_ns > 0) w.ops[kWrite] = {1, write_ns};
  return w;
}

TEST(StaleGroupTest, AWriteNothingRefreshesStopsHoldingThePathDegraded) {
  const Config config;
  HeadScorer h(config);
  // Both paths write once; a's write took 30 ms, b's 1 ms. Then reads only,
  // equally fast on both.
  h.Update({Window("a", kMs, 30 * kMs), Window("b", kMs, kMs)});
  h.Update({Window("a", kMs), Window("b", kMs)});
  // The write is fresh evidence: degraded after degraded_windows.
  EXPECT_EQ(h.Find("a")->health, model::PathHealth::kDegraded);
  ASSERT_TRUE(h.Summary().imbalance[kWrite].has_value());
  EXPECT_GE(*h.Summary().imbalance[kWrite], 3.0);

  int windows = 2;
  while (h.Find("a")->health != model::PathHealth::kHealthy && windows < 100) {
    h.Update({Window("a", kMs), Window("b", kMs)});
    ++windows;
  }
  // Held while the write group is fresh (idle_windows after its sample),
  // then recover_windows clean windows.
  EXPECT_EQ(windows, config.idle_windows + config.recover_windows);
  EXPECT_FALSE(h.Summary().imbalance[kWrite].has_value());
  AdvisorInput in;
  in.current_iopolicy = model::Iopolicy::kRoundRobin;
  in.kernel_has_queue_depth = true;
  in.heads = {&h};
  EXPECT_EQ(Advise(in).iopolicy, model::Iopolicy::kRoundRobin);
  // The EWMA itself is kept (and exported): it is the last thing known.
  EXPECT_EQ(*h.Find("a")->ewma_ns[kWrite], 30 * kMs);
}

TEST(StaleGroupTest, ASlowGroupThatKeepsBeingSampledKeepsThePathDegraded) {
  const Config config;
  HeadScorer h(config);
  for (int i = 0; i < 3 * config.idle_windows; ++i) {
    h.Update({Window("a", kMs, 30 * kMs), Window("b", kMs, kMs)});
  }
  EXPECT_EQ(h.Find("a")->health, model::PathHealth::kDegraded);
}

}  // namespace
}  // namespace pathwise::scoring

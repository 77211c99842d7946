// SPDX-License-Identifier: Apache-2.0
// The datapath's exposition of its selector: with the pathwise policy, the
// scoring its selector keeps under the agent's scoring families
// (pathwise_path_latency_ewma_seconds, pathwise_path_weight, ...), the same
// values the selector holds; the in-flight counts, base latencies and caps
// as pathwise_datapath_* families; none of the scoring for the kernel's
// policies; promtool's verdict.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "datapath/exposition.h"
#include "datapath/shared_selector.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/datapath/view_fixture.h"
#include "tests/unit/promtool.h"

namespace pathwise::datapath {
namespace {

using testing_util::kP0;
using testing_util::kP1;
using testing_util::Path;

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kMs = 1'000'000;

// A selector of `policy` over two usable paths after one window of reads:
// ten on path 0 at 1 ms, ten on path 1 at 4 ms, and one read still out
// on path 1.
SelectorView RunSelector(policy::Policy policy) {
  SharedSelector sel(policy, {}, 0);
  PathStates paths(2, RetryPolicy{});
  sel.Refresh(paths);
  const policy::IoRequest read{.op = model::OpGroup::kRead, .bytes = 4096};
  int64_t now = 0;
  for (int i = 0; i < 10; ++i) {
    sel.OnSubmit(0, read, now);
    sel.OnSubmit(1, read, now);
    sel.OnComplete(0, read, {.now_ns = now + kMs, .latency_ns = kMs});
    sel.OnComplete(1, read, {.now_ns = now + 4 * kMs, .latency_ns = 4 * kMs});
    now += 5 * kMs;
  }
  sel.OnSubmit(1, read, now);
  sel.MaybeTick(1'000 * kMs);
  return sel.View();
}

DatapathView View(policy::Policy policy) {
  DatapathView v;
  v.device = "ublkb0";
  v.policy = policy;
  v.group.id = "uuid.0000-1";
  v.group.paths = {Path(0), Path(1)};
  v.stats.paths.resize(2);
  v.status.resize(2);
  v.selector = RunSelector(policy);
  return v;
}

std::string Text(const DatapathView& v) {
  std::vector<model::Controller> c(2);
  c[0].name = "nvme0";
  c[1].name = "nvme1";
  const model::Topology t =
      DatapathTopology(v, {"nvme-subsys3", "nvme-subsys3"}, c);
  const model::Snapshot s = DatapathSnapshot(v, t);
  std::vector<prometheus::MetricFamily> f =
      exporters::BuildFamilies(&s, {"1.2.3", "abc"}, {});
  for (auto& x : DatapathFamilies(v, t)) f.push_back(std::move(x));
  return exporters::SerializeText(f);
}

TEST(DatapathScoringExposition, TheSelectorsScoringUnderTheAgentsNames) {
  const DatapathView v = View(policy::Policy::kPathwise);
  ASSERT_TRUE(v.selector.scorer.has_value());
  const auto read = model::Index(model::OpGroup::kRead);
  const uint32_t w0 = v.selector.weights[read][0];
  const uint32_t w1 = v.selector.weights[read][1];
  // Inverse to the EWMAs (64 x 1000 / 1250 and 64 x 250 / 1250).
  EXPECT_EQ(w0, 51u);
  EXPECT_EQ(w1, 12u);
  const std::string text = Text(v);
  EXPECT_THAT(text,
              HasSubstr(absl::StrCat("pathwise_path_latency_ewma_seconds{", kP0,
                                     ",op_group=\"read\"} 0.001\n")));
  EXPECT_THAT(text,
              HasSubstr(absl::StrCat("pathwise_path_latency_ewma_seconds{", kP1,
                                     ",op_group=\"read\"} 0.004\n")));
  EXPECT_THAT(text, HasSubstr(absl::StrCat("pathwise_path_weight{", kP0,
                                           ",op_group=\"read\"} ", w0, "\n")));
  EXPECT_THAT(text, HasSubstr(absl::StrCat("pathwise_path_weight{", kP1,
                                           ",op_group=\"read\"} ", w1, "\n")));
  // No writes: no write EWMA, and the paths share the write weight.
  EXPECT_THAT(text, Not(HasSubstr("op_group=\"write\"} 0.0")));
  EXPECT_THAT(text, HasSubstr(absl::StrCat("pathwise_path_weight{", kP0,
                                           ",op_group=\"write\"} 32\n")));
  EXPECT_THAT(text, HasSubstr(absl::StrCat("pathwise_path_health{", kP1,
                                           ",state=\"healthy\"} 1\n")));
  EXPECT_THAT(text,
              HasSubstr(absl::StrCat("pathwise_path_score{", kP0, "} 100\n")));
  EXPECT_THAT(text,
              HasSubstr("pathwise_head_latency_imbalance_ratio{"
                        "subsystem=\"nvme-subsys3\",head=\"ublkb0\"} 4\n"));
  // The advisor is the kernel's iopolicy's: nothing of it here.
  EXPECT_THAT(text, Not(HasSubstr("pathwise_subsystem_iopolicy_recommended{")));
}

TEST(DatapathScoringExposition, TheSelectorsOwnTerms) {
  const std::string text = Text(View(policy::Policy::kPathwise));
  EXPECT_THAT(text, HasSubstr(absl::StrCat("pathwise_datapath_path_inflight{",
                                           kP0, "} 0\n")));
  EXPECT_THAT(text, HasSubstr(absl::StrCat("pathwise_datapath_path_inflight{",
                                           kP1, "} 1\n")));
  EXPECT_THAT(text, HasSubstr(absl::StrCat(
                        "pathwise_datapath_path_base_latency_seconds{", kP0,
                        "} 0.001\n")));
  EXPECT_THAT(text, HasSubstr(absl::StrCat(
                        "pathwise_datapath_path_base_latency_seconds{", kP1,
                        "} 0.004\n")));
  EXPECT_THAT(text,
              HasSubstr(absl::StrCat("pathwise_datapath_path_cap{", kP0)));
}

TEST(DatapathScoringExposition, NoScoringBeforeTheFirstWindow) {
  DatapathView v = View(policy::Policy::kPathwise);
  SharedSelector fresh(policy::Policy::kPathwise, {}, 0);
  PathStates paths(2, RetryPolicy{});
  fresh.Refresh(paths);
  v.selector = fresh.View();
  const std::string text = Text(v);
  EXPECT_THAT(text, Not(HasSubstr("pathwise_path_weight{")));
  EXPECT_THAT(text, Not(HasSubstr("pathwise_datapath_path_base_latency")));
  EXPECT_THAT(text, HasSubstr(absl::StrCat("pathwise_datapath_path_inflight{",
                                           kP0, "} 0\n")));
}

TEST(DatapathScoringExposition, KernelPoliciesHaveNoScoring) {
  for (policy::Policy p :
       {policy::Policy::kQueueDepth, policy::Policy::kRoundRobin}) {
    const std::string text = Text(View(p));
    EXPECT_THAT(text, Not(HasSubstr("pathwise_path_latency_ewma_seconds{")));
    EXPECT_THAT(text, Not(HasSubstr("pathwise_path_weight{")));
    EXPECT_THAT(text, Not(HasSubstr("pathwise_datapath_path_cap{")));
    // Their in-flight counts are the selector's all the same.
    EXPECT_THAT(text, HasSubstr(absl::StrCat("pathwise_datapath_path_inflight{",
                                             kP1, "} 1\n")));
  }
}

TEST(DatapathScoringExposition, PromtoolAcceptsIt) {
  testing_util::ExpectPromtoolAccepts(Text(View(policy::Policy::kPathwise)),
                                      "datapath_scoring.prom");
}

}  // namespace
}  // namespace pathwise::datapath

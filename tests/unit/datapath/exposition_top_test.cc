// SPDX-License-Identifier: Apache-2.0
// The datapath's /api/v1/snapshot as `pathwise top --url` reads it: the
// route's document parsed by ui's snapshot parser, two of them made into a
// frame (per-path rates and window quantiles from the datapath's
// histograms, its policy, each path's state and share of the selector's
// choices, the no-path waits; with the pathwise policy its selector's
// health, EWMA and weights), and that frame's text and JSON.
#include <string>

#include "absl/strings/match.h"
#include "datapath/exposition.h"
#include "datapath/shared_selector.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/datapath/view_fixture.h"
#include "ui/frame.h"
#include "ui/frame_json.h"
#include "ui/snapshot_json.h"
#include "ui/text.h"

namespace pathwise::datapath {
namespace {

using testing_util::Path;
using testing_util::TwoPathView;

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kUsNs = 1000;

// Two paths under the queue-depth policy, both usable, with some I/O.
DatapathView Start() {
  DatapathView v = TwoPathView(policy::Policy::kQueueDepth);
  v.stats.paths[0].RecordOp(model::Op::kRead, 4096, 100 * kUsNs);
  v.stats.paths[0].selections = 5;
  v.stats.paths[1].RecordOp(model::Op::kRead, 4096, 100 * kUsNs);
  v.stats.paths[1].selections = 2;
  v.stats.requests = 7;
  v.status = {PathStatus{}, PathStatus{}};
  v.status[0].ana = model::AnaState::kOptimized;
  v.status[1].ana = model::AnaState::kOptimized;
  v.selector.inflight = {0, 0};
  return v;
}

// `v` one interval on: path 0 served 98 reads of 100 us and two of 5 ms
// and was chosen 30 times, path 1 was chosen 10 times and then failed
// (probed now); 3 requests waited for a path, one of them timed out.
DatapathView Later(DatapathView v) {
  PathStats& p0 = v.stats.paths[0];
  for (int i = 0; i < 98; ++i) p0.RecordOp(model::Op::kRead, 4096, 100 * kUsNs);
  p0.RecordOp(model::Op::kRead, 4096, 5000 * kUsNs);
  p0.RecordOp(model::Op::kRead, 4096, 5000 * kUsNs);
  p0.selections += 30;
  v.stats.paths[1].selections += 10;
  v.stats.paths[1].failovers = 1;
  v.status[1].failed = true;
  v.status[1].probing = true;
  v.stats.requests += 40;
  v.stats.no_path_waits = 3;
  v.stats.no_path_timeouts = 1;
  v.selector.inflight = {4, 0};
  return v;
}

model::Snapshot Fetch(const DatapathView& v) {
  exporters::HttpRoutes routes = DatapathRoutes(
      [v] { return v; }, "/nonexistent", exporters::BuildInfo{"1.2.3", "abc"},
      exporters::HistogramBuckets::kCoarse, nullptr);
  const exporters::HttpResponse r = routes.at("/api/v1/snapshot")();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "application/json");
  absl::StatusOr<model::Snapshot> s = ui::SnapshotFromJsonText(r.Body());
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : model::Snapshot{};
}

// The frame over two fetches; the second is placed two seconds after the
// first (both are stamped with the clock at the request).
ui::Frame TwoFetches() {
  model::Snapshot a = Fetch(Start());
  const model::Snapshot b = Fetch(Later(Start()));
  a.collected_at = b.collected_at - absl::Seconds(2);
  return ui::BuildFrame(&a, b);
}

const ui::PathRow* Row(const ui::Frame& f, const std::string& name) {
  for (const ui::PathRow& p : f.paths) {
    if (p.path == name) return &p;
  }
  return nullptr;
}

TEST(DatapathTop, SnapshotRouteParsesBackWithTheDecisions) {
  const model::Snapshot s = Fetch(Later(Start()));
  ASSERT_TRUE(s.datapath.has_value());
  EXPECT_EQ(s.datapath->device, "ublkb0");
  EXPECT_EQ(s.datapath->policy, "queue-depth");
  EXPECT_EQ(s.datapath->no_path_waits, 3u);
  EXPECT_EQ(s.datapath->no_path_timeouts, 1u);
  ASSERT_EQ(s.datapath->paths.size(), 2u);
  EXPECT_EQ(s.datapath->paths[0].selections, 35u);
  EXPECT_EQ(s.datapath->paths[0].inflight, 4u);
  EXPECT_EQ(s.datapath->paths[1].state, model::DatapathPathState::kFailed);
  EXPECT_TRUE(s.datapath->paths[1].probing);
  // The same snapshot /metrics is built from: topology, I/O, errors.
  EXPECT_NE(s.topology.FindPath("nvme0n1"), nullptr);
  EXPECT_EQ(s.path_io.at("nvme0n1").op(model::Op::kRead)->completed, 101u);
  EXPECT_EQ(s.path_nvme.at("nvme1n1").failovers, 1u);
  ASSERT_FALSE(s.collectors.empty());
  EXPECT_EQ(s.collectors[0].name, "datapath");
}

TEST(DatapathTop, FrameHasRatesQuantilesAndDecisions) {
  const ui::Frame f = TwoFetches();
  EXPECT_DOUBLE_EQ(f.interval_seconds, 2);
  const ui::PathRow* p0 = Row(f, "nvme0n1");
  const ui::PathRow* p1 = Row(f, "nvme1n1");
  ASSERT_NE(p0, nullptr);
  ASSERT_NE(p1, nullptr);
  EXPECT_DOUBLE_EQ(p0->read.iops, 50);  // 100 reads over 2 s
  // The window's histogram: 98 reads of 100 us and two of 5 ms.
  ASSERT_TRUE(p0->read.p50 && p0->read.p99);
  EXPECT_LT(*p0->read.p50, 200e-6);
  EXPECT_GT(*p0->read.p99, 1e-3);
  EXPECT_EQ(p0->ana_state, "optimized");
  EXPECT_EQ(p0->datapath_state, "usable");
  EXPECT_EQ(p1->datapath_state, "failed probing");
  ASSERT_TRUE(p0->selections && p1->selections);
  EXPECT_EQ(p0->selections->interval, 30u);
  EXPECT_EQ(p1->selections->interval, 10u);
  ASSERT_TRUE(p0->selection_share && p1->selection_share);
  EXPECT_DOUBLE_EQ(*p0->selection_share, 0.75);
  EXPECT_DOUBLE_EQ(*p1->selection_share, 0.25);
  EXPECT_EQ(p0->inflight, 4u);
  ASSERT_TRUE(p1->failovers.has_value());
  EXPECT_EQ(p1->failovers->interval, 1u);
  ASSERT_TRUE(f.datapath.has_value());
  EXPECT_EQ(f.datapath->policy, "queue-depth");
  EXPECT_EQ(f.datapath->paths, 2);
  EXPECT_EQ(f.datapath->usable, 1);
  EXPECT_EQ(f.datapath->no_path_waits.interval, 3u);
  EXPECT_EQ(f.datapath->no_path_timeouts.total, 1u);
  EXPECT_EQ(f.datapath->requests.interval, 40u);
}

TEST(DatapathTop, TextShowsTheDecisions) {
  const ui::Frame f = TwoFetches();
  const std::vector<ui::Line> lines = ui::RenderLines(f, {});
  std::string text;
  bool warned = false, failed_path_bad = false;
  for (const ui::Line& l : lines) {
    text += l.text + "\n";
    if (absl::StartsWith(l.text, "datapath ")) {
      warned = l.style == ui::LineStyle::kWarn;
    }
    if (absl::StrContains(l.text, "nvme1n1")) {
      failed_path_bad = l.style == ui::LineStyle::kBad;
    }
  }
  EXPECT_THAT(text, HasSubstr("datapath ublkb0  policy queue-depth  usable "
                              "1/2  no-path waits 3(+3) timeouts 1(+1)"));
  EXPECT_THAT(text, HasSubstr("DP-STATE"));
  EXPECT_THAT(text, HasSubstr("SEL%"));
  EXPECT_THAT(text, HasSubstr("failed probing"));
  EXPECT_THAT(text, HasSubstr("75%"));
  EXPECT_THAT(text, HasSubstr("25%"));
  EXPECT_TRUE(warned);  // a path is out of use and requests waited
  EXPECT_TRUE(failed_path_bad);
  // The width rules hold with the two more columns; the state stays
  // longest after the path, its health and ANA state.
  for (int width = 1; width <= 200; ++width) {
    for (const ui::Line& l : ui::RenderLines(f, {.width = width})) {
      EXPECT_LE(static_cast<int>(l.text.size()), width);
    }
  }
  std::string narrow;
  for (const ui::Line& l : ui::RenderLines(f, {.width = 50})) {
    narrow += l.text + "\n";
  }
  EXPECT_THAT(narrow, HasSubstr("DP-STATE"));
  EXPECT_THAT(narrow, Not(HasSubstr("W-IOPS")));
}

TEST(DatapathTop, JsonHasTheDecisions) {
  const nlohmann::json j = ui::FrameToJson(TwoFetches(), "dp");
  ASSERT_TRUE(j.contains("datapath"));
  EXPECT_EQ(j["datapath"]["policy"], "queue-depth");
  EXPECT_EQ(j["datapath"]["usable_paths"], 1);
  EXPECT_EQ(j["datapath"]["no_path_waits"]["interval"], 3);
  ASSERT_EQ(j["paths"].size(), 2u);
  EXPECT_EQ(j["paths"][0]["datapath"]["state"], "usable");
  EXPECT_EQ(j["paths"][0]["datapath"]["selections"]["interval"], 30);
  EXPECT_DOUBLE_EQ(j["paths"][0]["datapath"]["selection_share"].get<double>(),
                   0.75);
}

TEST(DatapathTop, AgentSnapshotHasNoDatapath) {
  model::Snapshot agent = Fetch(Start());
  agent.datapath.reset();
  const ui::Frame f = ui::BuildFrame(nullptr, agent);
  EXPECT_FALSE(f.datapath.has_value());
  EXPECT_FALSE(f.paths.at(0).datapath_state.has_value());
  const std::string text = ui::RenderText(f, {});
  EXPECT_THAT(text, Not(HasSubstr("DP-STATE")));
  EXPECT_THAT(text, Not(HasSubstr("datapath ublkb0")));
  const nlohmann::json j = ui::FrameToJson(f, "agent");
  EXPECT_FALSE(j.contains("datapath"));
  EXPECT_FALSE(j["paths"][0].contains("datapath"));
}

// The pathwise policy's selector after one window of reads: ten on path 0
// at 1 ms, ten on path 1 at 4 ms.
SelectorView PathwiseSelector() {
  SharedSelector sel(policy::Policy::kPathwise, {}, 0);
  PathStates paths(2, RetryPolicy{});
  sel.Refresh(paths);
  const policy::IoRequest read{.op = model::OpGroup::kRead, .bytes = 4096};
  constexpr int64_t kMsNs = 1'000'000;
  int64_t now = 0;
  for (int i = 0; i < 10; ++i) {
    sel.OnSubmit(0, read, now);
    sel.OnSubmit(1, read, now);
    sel.OnComplete(0, read, {.now_ns = now + kMsNs, .latency_ns = kMsNs});
    sel.OnComplete(1, read,
                   {.now_ns = now + 4 * kMsNs, .latency_ns = 4 * kMsNs});
    now += 5 * kMsNs;
  }
  sel.MaybeTick(1'000 * kMsNs);
  return sel.View();
}

TEST(DatapathTop, PathwisePolicyShowsHealthEwmaAndWeight) {
  DatapathView v = Start();
  v.policy = policy::Policy::kPathwise;
  v.selector = PathwiseSelector();
  const ui::Frame f = ui::BuildFrame(nullptr, Fetch(v));
  ASSERT_TRUE(f.datapath.has_value());
  EXPECT_EQ(f.datapath->policy, "pathwise");
  const ui::PathRow* p0 = Row(f, "nvme0n1");
  const ui::PathRow* p1 = Row(f, "nvme1n1");
  ASSERT_NE(p0, nullptr);
  ASSERT_NE(p1, nullptr);
  EXPECT_TRUE(p0->health.has_value());
  ASSERT_TRUE(p0->ewma_read && p1->ewma_read);
  EXPECT_LT(*p0->ewma_read, *p1->ewma_read);
  ASSERT_TRUE(p0->weight_read && p1->weight_read);
  EXPECT_GT(*p0->weight_read, *p1->weight_read);
  EXPECT_THAT(ui::RenderText(f, {}), HasSubstr("policy pathwise"));
}

TEST(DatapathTop, MalformedDatapathObjectIsNamed) {
  exporters::HttpRoutes routes = DatapathRoutes(
      [] { return Start(); }, "/nonexistent", exporters::BuildInfo{},
      exporters::HistogramBuckets::kCoarse, nullptr);
  nlohmann::json j =
      nlohmann::json::parse(routes.at("/api/v1/snapshot")().Body());
  j["datapath"]["paths"][0]["state"] = "sideways";
  const absl::StatusOr<model::Snapshot> s = ui::SnapshotFromJson(j);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("datapath.paths[0].state"));
}

}  // namespace
}  // namespace pathwise::datapath

// SPDX-License-Identifier: Apache-2.0
// The per hardware queue part of the queue map's views: the
// pathwise_queue_hctx_* families (labels, coarse histogram, only when
// counted, promtool's verdict), the JSON member and the text table.
#include <string>

#include "exporters/prometheus_families.h"
#include "exporters/queues_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/synthetic.h"
#include "tests/unit/promtool.h"

namespace pathwise::exporters {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const BuildInfo kBuild{"0.0.0-test", "hctx"};

model::QueueMap Counted(double window) {
  model::QueueMap m;
  m.hctx_io = true;
  m.hctx_dropped = 2;
  m.hctx_window_seconds = window;
  model::PathHctxIo& p = m.path_hctx.emplace_back();
  p.path = "nvme0c1n1";
  p.controller = "nvme1";
  for (int i = 0; i < 2; ++i) {
    model::HctxIo& h = p.hctxs.emplace_back();
    h.index = i;
    h.cpus = {i};
    h.completed = 100 * (i + 1);
    h.latency_sum_ns = 50'000'000 * (i + 1);  // 0.5 ms each
    h.remote_completions = 10 * i;
    // Fine slot 48 is le = 2^22 ns (4.19 ms), a coarse bound.
    h.latency.AddToBucket(48, h.completed);
  }
  return m;
}

TEST(HctxExposition, FamiliesWithPathAndQid) {
  model::Snapshot s = model::MakeSyntheticSnapshot({});
  s.queues = Counted(0);
  const std::string text = SerializeText(BuildFamilies(&s, kBuild));
  EXPECT_THAT(text, HasSubstr("pathwise_queue_hctx_completed_total{controller="
                              "\"nvme1\",path=\"nvme0c1n1\",qid=\"2\"} 200"));
  EXPECT_THAT(text,
              HasSubstr("pathwise_queue_hctx_remote_completions_total{"
                        "controller=\"nvme1\",path=\"nvme0c1n1\",qid=\"2\"} "
                        "10"));
  EXPECT_THAT(text, HasSubstr("pathwise_queue_hctx_latency_seconds_sum{"
                              "controller=\"nvme1\",path=\"nvme0c1n1\",qid="
                              "\"1\"} 0.05"));
  EXPECT_THAT(text, HasSubstr("pathwise_queue_hctx_latency_seconds_bucket{"
                              "controller=\"nvme1\",path=\"nvme0c1n1\",qid="
                              "\"1\",le=\"0.004194304\"} 100"));
  EXPECT_THAT(text, HasSubstr("pathwise_queue_hctx_latency_seconds_bucket{"
                              "controller=\"nvme1\",path=\"nvme0c1n1\",qid="
                              "\"1\",le=\"0.002097152\"} 0"));
  EXPECT_THAT(text, HasSubstr("pathwise_queue_hctx_dropped_total 2"));
  testing_util::ExpectPromtoolAccepts(text, "hctx.prom");

  // Without per-queue counting (no eBPF sampler): none of them.
  s.queues->hctx_io = false;
  s.queues->hctx_io_unknown = "needs the eBPF sampler";
  EXPECT_THAT(SerializeText(BuildFamilies(&s, kBuild)),
              Not(HasSubstr("pathwise_queue_hctx_")));
}

TEST(HctxJson, MemberOnlyWhenAskedFor) {
  EXPECT_FALSE(QueueMapToJson(model::QueueMap{}).contains("hardware_queues"));
  const nlohmann::json j = QueueMapToJson(Counted(2.0))["hardware_queues"];
  EXPECT_EQ(j["counted"], true);
  EXPECT_EQ(j["dropped"], 2);
  EXPECT_EQ(j["window_seconds"], 2.0);
  const nlohmann::json& h = j["paths"][0]["hctxs"][1];
  EXPECT_EQ(j["paths"][0]["path"], "nvme0c1n1");
  EXPECT_EQ(j["paths"][0]["controller"], "nvme1");
  EXPECT_EQ(h["qid"], 2);
  EXPECT_EQ(h["cpus"], nlohmann::json::array({1}));
  EXPECT_EQ(h["completed"], 200);
  EXPECT_EQ(h["remote_completions"], 10);
  EXPECT_DOUBLE_EQ(h["mean_inflight"].get<double>(), 0.05);
  ASSERT_EQ(h["latency_buckets"].size(), 25u);
  EXPECT_EQ(h["latency_buckets"][10]["le_ns"], uint64_t{1} << 22);
  EXPECT_EQ(h["latency_buckets"][10]["count"], 200);
  EXPECT_EQ(h["latency_buckets"][24]["le_ns"], nullptr);
  EXPECT_TRUE(QueueMapToJson(Counted(
      0))["hardware_queues"]["paths"][0]["hctxs"][0]["mean_inflight"]
                  .is_null());

  model::QueueMap off;
  off.hctx_io_unknown = "BPF off";
  const nlohmann::json o = QueueMapToJson(off)["hardware_queues"];
  EXPECT_EQ(o["counted"], false);
  EXPECT_EQ(o["unknown"], "BPF off");
}

TEST(HctxText, OneLinePerQueue) {
  const std::string t = QueueMapToText(Counted(2.0));
  EXPECT_THAT(t, HasSubstr("no NVMe/TCP controllers"));
  EXPECT_THAT(t, HasSubstr("per hardware queue, over 2.0 s:"));
  EXPECT_THAT(t, HasSubstr("nvme0c1n1 (nvme1)"));
  // qid 2: 200 I/Os in 2 s, 0.5 ms mean, 0.05 in flight, 5% remote.
  EXPECT_THAT(t, HasSubstr("2    1                 200        100     500.0"));
  EXPECT_THAT(t, HasSubstr("0.05    5.0%"));
  EXPECT_THAT(t, HasSubstr("counted on no hardware queue: 2"));
  model::QueueMap off;
  off.hctx_io_unknown = "BPF off";
  EXPECT_THAT(QueueMapToText(off), HasSubstr("per hardware queue: BPF off"));
  EXPECT_THAT(QueueMapToText(model::QueueMap{}),
              Not(HasSubstr("per hardware queue")));
}

}  // namespace
}  // namespace pathwise::exporters

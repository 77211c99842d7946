// SPDX-License-Identifier: Apache-2.0
// The controller probe families in the exposition: names, labels, one
// series per failure reason, nothing with probes off, and promtool's
// verdict on the text; the probes in the snapshot JSON.
#include <cstdio>
#include <fstream>

#include "absl/strings/match.h"
#include "exporters/prometheus_families.h"
#include "exporters/topology_json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/synthetic.h"
#include "tests/unit/promtool.h"

namespace pathwise::exporters {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const BuildInfo kBuild{"0.0.0-test", "probe"};

model::Snapshot WithProbes() {
  model::Snapshot s = model::MakeSyntheticSnapshot({});
  model::ControllerProbeStats& a = s.controller_probe["nvme0"];
  a.latency.Observe(31'000'000);
  a.latency.Observe(33'000'000);
  a.latency_sum_ns = 64'000'000;
  a.failures[model::Index(model::ProbeFailure::kTimeout)] = 2;
  a.failures[model::Index(model::ProbeFailure::kPath)] = 5;
  s.controller_probe["nvme1"];
  return s;
}

TEST(ProbeExposition, LatencyHistogramAndFailuresByReason) {
  const model::Snapshot s = WithProbes();
  const std::string text = SerializeText(BuildFamilies(&s, kBuild));
  EXPECT_THAT(text,
              HasSubstr("# TYPE pathwise_controller_probe_latency_seconds "
                        "histogram"));
  EXPECT_THAT(text, HasSubstr("pathwise_controller_probe_latency_seconds_count{"
                              "controller=\"nvme0\"} 2"));
  EXPECT_THAT(text, HasSubstr("pathwise_controller_probe_latency_seconds_sum{"
                              "controller=\"nvme0\"} 0.064"));
  EXPECT_THAT(text, HasSubstr("pathwise_controller_probe_failures_total{"
                              "controller=\"nvme0\",reason=\"timeout\"} 2"));
  EXPECT_THAT(text, HasSubstr("pathwise_controller_probe_failures_total{"
                              "controller=\"nvme0\",reason=\"path\"} 5"));
  EXPECT_THAT(text,
              HasSubstr("pathwise_controller_probe_failures_total{"
                        "controller=\"nvme1\",reason=\"unavailable\"} 0"));
  size_t reasons = 0;
  for (const std::string r :
       {"timeout", "transport", "unavailable", "generic", "command_specific",
        "media", "path", "vendor", "reserved"}) {
    reasons +=
        absl::StrContains(text, "controller=\"nvme1\",reason=\"" + r + "\"} 0");
  }
  EXPECT_EQ(reasons, model::kProbeFailureCount);
}

TEST(ProbeExposition, NothingWithProbesOff) {
  const model::Snapshot s = model::MakeSyntheticSnapshot({});
  const std::string text = SerializeText(BuildFamilies(&s, kBuild));
  EXPECT_THAT(text, Not(HasSubstr("pathwise_controller_probe")));
}

TEST(ProbeExposition, PromtoolAcceptsIt) {
  const model::Snapshot s = WithProbes();
  testing_util::ExpectPromtoolAccepts(SerializeText(BuildFamilies(&s, kBuild)),
                                      "probe.prom");
}

TEST(ProbeSnapshotJson, ProbesByControllerAndEmptyWhenOff) {
  const nlohmann::json j = SnapshotToJson(WithProbes());
  const nlohmann::json& a = j["probes"]["nvme0"];
  EXPECT_EQ(a["latency_seconds"]["count"], 2);
  EXPECT_DOUBLE_EQ(a["latency_seconds"]["sum_seconds"].get<double>(), 0.064);
  EXPECT_EQ(a["failures"]["timeout"], 2);
  EXPECT_EQ(a["failures"]["path"], 5);
  EXPECT_EQ(a["failures"]["unavailable"], 0);
  EXPECT_EQ(a["unreachable"], false);
  EXPECT_TRUE(j["probes"].contains("nvme1"));
  const nlohmann::json off = SnapshotToJson(model::MakeSyntheticSnapshot({}));
  EXPECT_TRUE(off["probes"].is_object());
  EXPECT_TRUE(off["probes"].empty());
}

}  // namespace
}  // namespace pathwise::exporters

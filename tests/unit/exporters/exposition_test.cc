// SPDX-License-Identifier: Apache-2.0
// The Prometheus exposition built from synthetic snapshots: the contract's
// metric names and labels, StateSets, stale-series removal and a golden file.
#include <set>

#include "absl/strings/match.h"
#include "exporters/prometheus_families.h"
#include "exporters/topology_json.h"
#include "exporters/topology_text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/synthetic.h"
#include "tests/unit/golden.h"

namespace pathwise::exporters {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::UnorderedElementsAreArray;

const BuildInfo kBuild{"0.0.0-test", "golden"};

std::set<std::string> Names(const std::vector<prometheus::MetricFamily>& fams) {
  std::set<std::string> out;
  for (const auto& f : fams) out.insert(f.name);
  return out;
}

const prometheus::MetricFamily& Get(
    const std::vector<prometheus::MetricFamily>& fams,
    const std::string& name) {
  for (const auto& f : fams) {
    if (f.name == name) return f;
  }
  ADD_FAILURE() << "no family " << name;
  static const prometheus::MetricFamily empty;
  return empty;
}

std::string Label(const prometheus::ClientMetric& m, const std::string& name) {
  for (const auto& l : m.label) {
    if (l.name == name) return l.value;
  }
  return "<absent>";
}

std::vector<std::string> LabelNames(const prometheus::ClientMetric& m) {
  std::vector<std::string> out;
  for (const auto& l : m.label) out.push_back(l.name);
  return out;
}

TEST(Exposition, ContractNamesAndLabelSets) {
  model::Snapshot s = model::MakeSyntheticSnapshot({});
  auto fams = BuildFamilies(&s, kBuild);
  EXPECT_EQ(Names(fams),
            (std::set<std::string>{"pathwise_build_info",
                                   "pathwise_subsystem_info",
                                   "pathwise_head_info",
                                   "pathwise_path_info",
                                   "pathwise_path_ana_state",
                                   "pathwise_controller_state",
                                   "pathwise_controller_info",
                                   "pathwise_controller_io_queues",
                                   "pathwise_topology_changes_total",
                                   "pathwise_subsystems",
                                   "pathwise_multipath_subsystems",
                                   "pathwise_path_io_completed_total",
                                   "pathwise_path_io_bytes_total",
                                   "pathwise_path_io_time_seconds_total",
                                   "pathwise_path_io_inflight",
                                   "pathwise_head_io_completed_total",
                                   "pathwise_head_io_bytes_total",
                                   "pathwise_head_io_time_seconds_total",
                                   "pathwise_head_io_inflight",
                                   "pathwise_sampler_info",
                                   "pathwise_collector_duration_seconds",
                                   "pathwise_collector_success"}));
  using V = std::vector<std::string>;
  auto labels = [&](const std::string& name) {
    return LabelNames(Get(fams, name).metric.at(0));
  };
  EXPECT_EQ(labels("pathwise_build_info"), (V{"version", "revision"}));
  EXPECT_EQ(labels("pathwise_subsystem_info"),
            (V{"subsystem", "nqn", "iopolicy", "model", "serial"}));
  EXPECT_EQ(labels("pathwise_head_info"), (V{"subsystem", "head", "nsid"}));
  EXPECT_EQ(
      labels("pathwise_path_info"),
      (V{"subsystem", "head", "path", "controller", "transport", "address"}));
  EXPECT_EQ(labels("pathwise_path_ana_state"),
            (V{"subsystem", "head", "path", "controller", "state"}));
  EXPECT_EQ(labels("pathwise_controller_state"), (V{"controller", "state"}));
  EXPECT_EQ(labels("pathwise_controller_info"),
            (V{"controller", "subsystem", "transport", "address", "cntlid"}));
  EXPECT_EQ(labels("pathwise_controller_io_queues"), (V{"controller"}));
  EXPECT_EQ(labels("pathwise_path_io_completed_total"),
            (V{"subsystem", "head", "path", "controller", "op"}));
  EXPECT_EQ(labels("pathwise_path_io_inflight"),
            (V{"subsystem", "head", "path", "controller"}));
  EXPECT_EQ(labels("pathwise_head_io_bytes_total"),
            (V{"subsystem", "head", "op"}));
  EXPECT_EQ(labels("pathwise_sampler_info"), (V{"source"}));
  EXPECT_EQ(labels("pathwise_collector_success"), (V{"collector"}));
  EXPECT_EQ(Get(fams, "pathwise_topology_changes_total").type,
            prometheus::MetricType::Counter);
  EXPECT_EQ(Get(fams, "pathwise_path_io_time_seconds_total").type,
            prometheus::MetricType::Counter);
}

TEST(Exposition, AnaStateSetHasOneSeriesPerStateAndOneHot) {
  model::Snapshot s = model::MakeSyntheticSnapshot({});
  s.topology.paths[1].ana_state = model::AnaState::kInaccessible;
  auto fams = BuildFamilies(&s, kBuild);
  const auto& ana = Get(fams, "pathwise_path_ana_state");
  ASSERT_EQ(ana.metric.size(), 2u * model::kAllAnaStates.size());
  for (const auto& m : ana.metric) {
    const std::string path = Label(m, "path");
    const std::string want =
        path == s.topology.paths[1].name ? "inaccessible" : "optimized";
    EXPECT_EQ(m.gauge.value, Label(m, "state") == want ? 1 : 0)
        << path << " " << Label(m, "state");
  }
}

TEST(Exposition, ControllerStateSetNormalisesDeletingNoIo) {
  model::Snapshot s = model::MakeSyntheticSnapshot({});
  s.topology.controllers[0].state = model::ControllerState::kDeletingNoIo;
  auto fams = BuildFamilies(&s, kBuild);
  int ones = 0;
  for (const auto& m : Get(fams, "pathwise_controller_state").metric) {
    if (Label(m, "controller") != s.topology.controllers[0].name) continue;
    if (m.gauge.value == 1) {
      ++ones;
      EXPECT_EQ(Label(m, "state"), "deleting");
    }
  }
  EXPECT_EQ(ones, 1);
}

TEST(Exposition, UnknownStatesGiveAllZeroStateSets) {
  // The collector reports an unknown state as an error; the exposition
  // keeps the object's StateSet with every member 0, for ANA and
  // controller states alike.
  model::Snapshot s = model::MakeSyntheticSnapshot({});
  model::Path& p = s.topology.paths[0];
  p.ana_state = model::AnaState::kUnknown;
  p.unknown_ana_state = "frozen";
  model::Controller& c = s.topology.controllers[0];
  c.state = model::ControllerState::kUnknown;
  c.unknown_state = "frozen";
  auto fams = BuildFamilies(&s, kBuild);
  size_t ana = 0, ctrl = 0;
  for (const auto& m : Get(fams, "pathwise_path_ana_state").metric) {
    if (Label(m, "path") != p.name) continue;
    ++ana;
    EXPECT_EQ(m.gauge.value, 0) << Label(m, "state");
  }
  for (const auto& m : Get(fams, "pathwise_controller_state").metric) {
    if (Label(m, "controller") != c.name) continue;
    ++ctrl;
    EXPECT_EQ(m.gauge.value, 0) << Label(m, "state");
  }
  EXPECT_EQ(ana, model::kAllAnaStates.size());
  EXPECT_EQ(ctrl, model::kControllerStateSet.size());
}

TEST(Exposition, VanishedPathsAndControllersLeaveNoSeries) {
  model::Snapshot s = model::MakeSyntheticSnapshot({});
  const std::string gone_path = s.topology.paths[1].name;
  const std::string gone_ctrl = s.topology.controllers[1].name;
  s.topology.paths.erase(s.topology.paths.begin() + 1);
  s.topology.controllers.erase(s.topology.controllers.begin() + 1);
  s.path_io.erase(gone_path);
  const std::string text = SerializeText(BuildFamilies(&s, kBuild));
  EXPECT_THAT(text, Not(HasSubstr("path=\"" + gone_path + "\"")));
  EXPECT_THAT(text, Not(HasSubstr("controller=\"" + gone_ctrl + "\"")));
  EXPECT_THAT(text, HasSubstr("path=\"" + s.topology.paths[0].name + "\""));
}

TEST(Exposition, BeforeFirstCollectionOnlyBuildInfo) {
  auto fams = BuildFamilies(nullptr, kBuild);
  EXPECT_EQ(Names(fams), std::set<std::string>{"pathwise_build_info"});
}

TEST(Exposition, NoNvmeGivesOnlyBuildAndSelfMetrics) {
  model::Snapshot s;
  s.io_source = model::IoSource::kSysfs;
  s.collectors = {{"nvme_topology", 0, true, ""},
                  {"nvme_iostats", 0, true, ""}};
  auto fams = BuildFamilies(&s, kBuild);
  EXPECT_EQ(Names(fams),
            (std::set<std::string>{
                "pathwise_build_info", "pathwise_collector_duration_seconds",
                "pathwise_collector_success", "pathwise_sampler_info",
                "pathwise_topology_changes_total", "pathwise_subsystems",
                "pathwise_multipath_subsystems"}));
  // Nothing to watch shows as 0, not as absent series.
  for (const char* name :
       {"pathwise_subsystems", "pathwise_multipath_subsystems"}) {
    const prometheus::MetricFamily& f = Get(fams, name);
    ASSERT_EQ(f.metric.size(), 1u) << name;
    EXPECT_EQ(f.metric[0].gauge.value, 0) << name;
  }
}

TEST(Exposition, MissingAttributesOmitSeriesNotTheObject) {
  model::Snapshot s = model::MakeSyntheticSnapshot({});
  s.topology.paths[0].ana_state = model::AnaState::kUnknown;
  s.topology.controllers[0].state = model::ControllerState::kUnknown;
  s.topology.controllers[0].io_queues.reset();
  auto fams = BuildFamilies(&s, kBuild);
  EXPECT_EQ(Get(fams, "pathwise_path_info").metric.size(), 2u);
  EXPECT_EQ(Get(fams, "pathwise_path_ana_state").metric.size(),
            model::kAllAnaStates.size());
  EXPECT_EQ(Get(fams, "pathwise_controller_info").metric.size(), 2u);
  EXPECT_EQ(Get(fams, "pathwise_controller_state").metric.size(),
            model::kControllerStateSet.size());
  EXPECT_EQ(Get(fams, "pathwise_controller_io_queues").metric.size(), 1u);
}

TEST(Exposition, SyntheticGolden) {
  model::Snapshot s =
      model::MakeSyntheticSnapshot({.subsystems = 2,
                                    .heads_per_subsystem = 2,
                                    .controllers_per_subsystem = 2});
  s.topology_changes_total = 3;
  testing::ExpectMatchesGolden(SerializeText(BuildFamilies(&s, kBuild)),
                               "synthetic.prom");
  testing::ExpectMatchesGolden(
      SerializeText(
          BuildFamilies(&s, kBuild,
                        {.histogram_buckets = HistogramBuckets::kSparse,
                         .profile = MetricsProfile::kDefault})),
      "synthetic.default.prom");
}

TEST(TopologyViews, TextAndJsonGolden) {
  model::Snapshot s =
      model::MakeSyntheticSnapshot({.subsystems = 2,
                                    .heads_per_subsystem = 2,
                                    .controllers_per_subsystem = 2});
  testing::ExpectMatchesGolden(TopologyToText(s.topology),
                               "synthetic.topology.txt");
  testing::ExpectMatchesGolden(TopologyToJson(s.topology).dump(2) + "\n",
                               "synthetic.topology.json");
  EXPECT_EQ(TopologyToText(model::Topology{}), "no NVMe subsystems found\n");
}

}  // namespace
}  // namespace pathwise::exporters

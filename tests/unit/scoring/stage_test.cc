// SPDX-License-Identifier: Apache-2.0
// The scoring stage in the agent: window deltas from the I/O sources'
// cumulative counters into the scoring library, and the model fields the
// exporters render (metrics, topology text and JSON).
#include "scoring/stage.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "exporters/prometheus_families.h"
#include "exporters/topology_json.h"
#include "exporters/topology_text.h"
#include "model/synthetic.h"
#include "tests/unit/golden.h"

namespace pathwise::scoring {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const exporters::BuildInfo kBuild{"0.0.0-test", "golden"};

// One subsystem (round-robin, paths on NUMA nodes 0 and 1), one head, two
// paths: nvme0c0n1 (optimized) and nvme0c1n1 (non-optimized), both live.
class ScoringStageTest : public ::testing::Test {
 protected:
  ScoringStageTest() {
    base_ = model::MakeSyntheticSnapshot({.subsystems = 1,
                                          .heads_per_subsystem = 1,
                                          .controllers_per_subsystem = 2});
    p0_ = base_.topology.paths[0].name;
    p1_ = base_.topology.paths[1].name;
    for (const std::string& p : {p0_, p1_}) {
      cum_[p] = model::IoStats{};
      cum_[p].op(model::Op::kRead) = model::OpStats{};
      cum_[p].op(model::Op::kWrite) = model::OpStats{};
    }
  }

  // Adds `n` reads of `ms` milliseconds each to path `p`'s cumulative
  // counters.
  void Reads(const std::string& p, uint64_t n, double ms) {
    model::OpStats& r = *cum_[p].op(model::Op::kRead);
    r.completed += n;
    r.bytes += n * 4096;
    r.time_ns += static_cast<uint64_t>(n * ms * 1e6);
  }

  // One window: a snapshot with the current cumulative counters, run
  // through `c`.
  model::Snapshot Window(ScoringStage& c) {
    model::Snapshot s = base_;
    s.path_io = cum_;
    s.path_nvme = nvme_;
    if (mutate_) mutate_(s);
    s.scoring = c.Score(s.topology, s.path_io, s.path_nvme);
    return s;
  }

  static const model::PathScoring& P(const model::Snapshot& s,
                                     const std::string& p) {
    return s.scoring->paths.at(p);
  }

  model::Snapshot base_;
  std::string p0_, p1_;
  std::map<std::string, model::IoStats, std::less<>> cum_;
  std::map<std::string, model::PathNvmeStats, std::less<>> nvme_;
  std::function<void(model::Snapshot&)> mutate_;
};

TEST(KernelHasQueueDepthTest, FromLinux611) {
  EXPECT_TRUE(KernelHasQueueDepth("6.12.117+deb12-amd64"));
  EXPECT_TRUE(KernelHasQueueDepth("6.11.0"));
  EXPECT_TRUE(KernelHasQueueDepth("7.0.1"));
  EXPECT_FALSE(KernelHasQueueDepth("6.1.0-57-amd64"));
  EXPECT_FALSE(KernelHasQueueDepth("6.10.14"));
  EXPECT_FALSE(KernelHasQueueDepth("5.15.0-91-generic"));
  EXPECT_TRUE(KernelHasQueueDepth("weird"));  // unknown: assume it has
}

TEST_F(ScoringStageTest, FirstWindowHasNoDeltasEqualWeights) {
  ScoringStage c({});
  Reads(p0_, 1000, 1);  // history before the agent started: not a window
  model::Snapshot s = Window(c);
  for (const std::string& p : {p0_, p1_}) {
    EXPECT_EQ(P(s, p).health, model::PathHealth::kHealthy);
    EXPECT_EQ(P(s, p).weight[0], 32u) << p;
    EXPECT_FALSE(P(s, p).latency_ewma_seconds[0].has_value());
    EXPECT_FALSE(P(s, p).score.has_value());
    EXPECT_FALSE(P(s, p).sample_age_seconds.has_value());
  }
  EXPECT_EQ(
      s.scoring->iopolicy_recommended.at("nvme-subsys0").iopolicy,
      model::Iopolicy::kRoundRobin);  // no evidence yet: keep the current one
  EXPECT_EQ(s.scoring->heads.at("nvme0n1").paths_by_state[0], 2);
}

TEST_F(ScoringStageTest, DeltasFeedEwmaWeightsHealthAndAdvice) {
  ScoringStage c({});
  Window(c);
  Reads(p0_, 100, 0.5);
  Reads(p1_, 100, 30);
  model::Snapshot s = Window(c);
  EXPECT_DOUBLE_EQ(*P(s, p0_).latency_ewma_seconds[0], 0.0005);
  EXPECT_DOUBLE_EQ(*P(s, p1_).latency_ewma_seconds[0], 0.030);
  EXPECT_FALSE(P(s, p0_).latency_ewma_seconds[1].has_value());  // no writes
  // scores 2000 and 33.3: 64*2000/2033.3 = 62.95, 64*33.3/2033.3 = 1.05
  EXPECT_EQ(P(s, p0_).weight[0], 62u);
  EXPECT_EQ(P(s, p1_).weight[0], 1u);
  EXPECT_EQ(P(s, p0_).weight[1], 32u);  // no write evidence: equal shares
  EXPECT_DOUBLE_EQ(*P(s, p0_).score, 100);
  EXPECT_NEAR(*P(s, p1_).score, 100 * 0.5 / 30, 1e-9);
  EXPECT_DOUBLE_EQ(*P(s, p0_).sample_age_seconds, 0);
  EXPECT_DOUBLE_EQ(*s.scoring->heads.at("nvme0n1").latency_imbalance_ratio, 60);
  EXPECT_EQ(P(s, p1_).health,
            model::PathHealth::kHealthy);  // one window over the ratio
  EXPECT_EQ(s.scoring->iopolicy_recommended.at("nvme-subsys0").iopolicy,
            model::Iopolicy::kQueueDepth);

  Reads(p0_, 100, 0.5);
  Reads(p1_, 100, 30);
  s = Window(c);
  EXPECT_EQ(P(s, p1_).health, model::PathHealth::kDegraded);
  EXPECT_EQ(s.scoring->heads.at("nvme0n1").paths_by_state[1], 1);

  // An idle window: EWMA kept, sample age grows by the interval.
  s = Window(c);
  EXPECT_DOUBLE_EQ(*P(s, p1_).latency_ewma_seconds[0], 0.030);
  EXPECT_DOUBLE_EQ(*P(s, p1_).sample_age_seconds, 1);
}

TEST_F(ScoringStageTest, WithoutQueueDepthTheAdvisorSaysRoundRobin) {
  ScoringStage c({.kernel_has_queue_depth = false});
  Window(c);
  Reads(p0_, 100, 0.5);
  Reads(p1_, 100, 30);
  model::Snapshot s = Window(c);
  EXPECT_EQ(s.scoring->iopolicy_recommended.at("nvme-subsys0").iopolicy,
            model::Iopolicy::kRoundRobin);
  EXPECT_THAT(s.scoring->iopolicy_recommended.at("nvme-subsys0").reason,
              HasSubstr("no queue-depth"));
}

TEST_F(ScoringStageTest, SymmetricPathsOnTwoNodesNuma) {
  ScoringStage c({});
  Window(c);
  Reads(p0_, 100, 0.5);
  Reads(p1_, 100, 0.5);
  model::Snapshot s = Window(c);
  EXPECT_EQ(P(s, p0_).weight[0], 32u);
  EXPECT_EQ(s.scoring->iopolicy_recommended.at("nvme-subsys0").iopolicy,
            model::Iopolicy::kNuma);
}

TEST_F(ScoringStageTest, UnusablePathsAreFailedWithWeightZero) {
  ScoringStage c({});
  Window(c);
  mutate_ = [&](model::Snapshot& s) {
    s.topology.paths[0].ana_state = model::AnaState::kInaccessible;
    s.topology.controllers[1].state = model::ControllerState::kConnecting;
  };
  Reads(p0_, 100, 0.5);
  model::Snapshot s = Window(c);
  for (const std::string& p : {p0_, p1_}) {
    EXPECT_EQ(P(s, p).health, model::PathHealth::kFailed) << p;
    EXPECT_EQ(P(s, p).weight, (std::array<uint32_t, 3>{0, 0, 0})) << p;
  }
  EXPECT_EQ(s.scoring->heads.at("nvme0n1").paths_by_state[2], 2);
}

TEST_F(ScoringStageTest, ReportedButUnknownStatesAreNotUsable) {
  ScoringStage c({});
  Window(c);
  // What a newer kernel (or garbage) may report: not a state the kernel's
  // selectors are known to send I/O in, so not usable. Not reported at all
  // (no ANA, no state) stays usable.
  mutate_ = [&](model::Snapshot& s) {
    s.topology.paths[0].ana_state = model::AnaState::kUnknown;
    s.topology.paths[0].unknown_ana_state = "sideways";
    s.topology.paths[1].ana_state = model::AnaState::kUnknown;
    s.topology.controllers[1].state = model::ControllerState::kUnknown;
  };
  Reads(p0_, 100, 0.5);
  Reads(p1_, 100, 0.5);
  model::Snapshot s = Window(c);
  EXPECT_EQ(P(s, p0_).health, model::PathHealth::kFailed);
  EXPECT_EQ(P(s, p0_).weight[0], 0u);
  EXPECT_NE(P(s, p1_).health, model::PathHealth::kFailed);
  EXPECT_EQ(P(s, p1_).weight[0], 64u);

  mutate_ = [&](model::Snapshot& s) {
    s.topology.controllers[0].state = model::ControllerState::kUnknown;
    s.topology.controllers[0].unknown_state = "frobnicating";
  };
  s = Window(c);
  const model::Path& p = s.topology.paths[0];
  const model::Controller* ctrl = s.topology.FindController(p.controller);
  ASSERT_NE(ctrl, nullptr);
  EXPECT_FALSE(IsUsable(p, ctrl)) << p.name << " on " << ctrl->name;
  EXPECT_TRUE(IsUsable(s.topology.paths[1], nullptr));
}

TEST_F(ScoringStageTest, AnIopolicyPathwiseDoesNotKnowIsKept) {
  ScoringStage c({});
  mutate_ = [&](model::Snapshot& s) {
    s.topology.subsystems[0].iopolicy = model::Iopolicy::kUnknown;
    s.topology.subsystems[0].unknown_iopolicy = "latency";
  };
  model::Snapshot s = Window(c);  // no evidence yet: keep the current one
  const model::IopolicyRecommendation& rec =
      s.scoring->iopolicy_recommended.at("nvme-subsys0");
  EXPECT_EQ(rec.iopolicy, model::Iopolicy::kUnknown);
  // The views show the kernel's own spelling; the StateSet has no member
  // at 1.
  EXPECT_EQ(
      exporters::SnapshotToJson(
          s)["scoring"]["iopolicy_recommended"]["nvme-subsys0"]["iopolicy"],
      "latency");
  const std::string prom =
      exporters::SerializeText(exporters::BuildFamilies(&s, {"v", "r"}));
  EXPECT_THAT(prom, Not(HasSubstr("pathwise_subsystem_iopolicy_recommended{"
                                  "subsystem=\"nvme-subsys0\",iopolicy=\"numa"
                                  "\"} 1")));
  EXPECT_THAT(prom, HasSubstr("pathwise_subsystem_iopolicy_recommended{"
                              "subsystem=\"nvme-subsys0\",iopolicy=\"numa"
                              "\"} 0"));
  // Not reported at all: the kernel's default is numa, and numa is kept.
  mutate_ = [&](model::Snapshot& s) {
    s.topology.subsystems[0].iopolicy = model::Iopolicy::kUnknown;
  };
  s = Window(c);
  EXPECT_EQ(s.scoring->iopolicy_recommended.at("nvme-subsys0").iopolicy,
            model::Iopolicy::kNuma);
}

TEST_F(ScoringStageTest, FailoversAndPathErrorsDegradeAtOnce) {
  ScoringStage c({});
  nvme_[p0_].errors_by_class.emplace();
  nvme_[p1_].errors_by_class.emplace();
  Window(c);
  (*nvme_[p0_].errors_by_class)[0] = 5;  // generic: not a path error
  nvme_[p1_].failovers = 1;
  Reads(p0_, 100, 0.5);
  Reads(p1_, 100, 0.5);
  model::Snapshot s = Window(c);
  EXPECT_EQ(P(s, p0_).health, model::PathHealth::kHealthy);
  EXPECT_EQ(P(s, p1_).health, model::PathHealth::kDegraded);
  // The same cumulative count next window is no new failover, but
  // recovery takes recover_windows clean windows.
  (*nvme_[p0_].errors_by_class)[model::ErrorClassIndex(
      model::NvmeStatusClass::kPath)] = 1;  // a path error on p0
  Reads(p0_, 100, 0.5);
  Reads(p1_, 100, 0.5);
  s = Window(c);
  EXPECT_EQ(P(s, p0_).health, model::PathHealth::kDegraded);
  EXPECT_EQ(P(s, p1_).health, model::PathHealth::kDegraded);
}

TEST_F(ScoringStageTest, CountersGoingBackwardsAreNoWindow) {
  ScoringStage c({});
  Window(c);
  Reads(p0_, 100, 0.5);
  Reads(p1_, 100, 0.5);
  Window(c);
  cum_[p1_].op(model::Op::kRead)->completed = 10;  // path re-created
  cum_[p1_].op(model::Op::kRead)->time_ns = 100;
  Reads(p0_, 100, 0.5);
  model::Snapshot s = Window(c);
  EXPECT_DOUBLE_EQ(*P(s, p1_).latency_ewma_seconds[0], 0.0005);
  EXPECT_DOUBLE_EQ(*P(s, p1_).sample_age_seconds, 1);
  Reads(p1_, 100, 1);  // counts from the new baseline: mean 1 ms
  s = Window(c);
  // (0.5 ms * 7 + 1 ms) / 8: under 3x, a plain EWMA step.
  EXPECT_DOUBLE_EQ(*P(s, p1_).latency_ewma_seconds[0], 0.0005625);
}

TEST_F(ScoringStageTest, SysfsMillisecondTicksAndOtherOps) {
  // The sysfs fallback's time is whole milliseconds summed over the
  // window's I/Os; discard and flush count as "other".
  ScoringStage c({});
  Window(c);
  Reads(p0_, 100, 1);
  Reads(p1_, 100, 1);
  cum_[p0_].op(model::Op::kFlush) = model::OpStats{20, 0, 40000000};
  cum_[p0_].op(model::Op::kDiscard) = model::OpStats{20, 0, 0};
  model::Snapshot s = Window(c);
  EXPECT_DOUBLE_EQ(*P(s, p0_).latency_ewma_seconds[2], 0.001);  // 40 ms / 40
  EXPECT_FALSE(P(s, p1_).latency_ewma_seconds[2].has_value());
}

TEST_F(ScoringStageTest, ExpositionAndTopologyViewsGolden) {
  ScoringStage c({});
  Window(c);
  for (int i = 0; i < 3; ++i) {
    Reads(p0_, 100, 0.5);
    Reads(p1_, 100, 30);
    auto& w = *cum_[p0_].op(model::Op::kWrite);
    w.completed += 10;
    w.time_ns += 10 * 800000;
  }
  model::Snapshot s = Window(c);
  Reads(p0_, 100, 0.5);
  Reads(p1_, 100, 30);
  s = Window(c);
  for (auto& r : s.collectors) r.duration_seconds = 0;
  const std::string prom =
      exporters::SerializeText(exporters::BuildFamilies(&s, kBuild));
  EXPECT_THAT(prom,
              HasSubstr("pathwise_path_health{subsystem=\"nvme-subsys0\""
                        ",head=\"nvme0n1\",path=\"" +
                        p1_ + "\",controller=\"nvme1\",state=\"degraded\"} 1"));
  EXPECT_THAT(prom, HasSubstr("pathwise_subsystem_iopolicy_recommended{"
                              "subsystem=\"nvme-subsys0\",iopolicy=\"queue-"
                              "depth\"} 1"));
  testing::ExpectMatchesGolden(prom, "scoring.prom");
  testing::ExpectMatchesGolden(
      exporters::SerializeText(exporters::BuildFamilies(
          &s, kBuild,
          {.histogram_buckets = exporters::HistogramBuckets::kSparse,
           .profile = exporters::MetricsProfile::kDefault})),
      "scoring.default.prom");
  testing::ExpectMatchesGolden(
      exporters::TopologyToText(s.topology, &*s.scoring),
      "scoring.topology.txt");
  testing::ExpectMatchesGolden(
      exporters::TopologyToJson(s.topology, &*s.scoring).dump(2) + "\n",
      "scoring.topology.json");
}

}  // namespace
}  // namespace pathwise::scoring

// SPDX-License-Identifier: Apache-2.0
// The scoring stage with controller probes: an op group without I/O in a
// window takes its controller's probe latency as its sample, and a
// controller that cannot be reached makes its paths unusable.
#include <gtest/gtest.h>

#include <string>

#include "model/synthetic.h"
#include "scoring/stage.h"

namespace pathwise::scoring {
namespace {

using model::OpGroup;
using model::ProbeFailure;

class ProbeScoringTest : public ::testing::Test {
 protected:
  ProbeScoringTest() {
    base_ = model::MakeSyntheticSnapshot({.subsystems = 1,
                                          .heads_per_subsystem = 1,
                                          .controllers_per_subsystem = 2});
    for (const model::Path& p : base_.topology.paths) {
      paths_.push_back(p.name);
      ctrls_.push_back(p.controller);
      io_[p.name] = model::IoStats{};
      io_[p.name].op(model::Op::kRead) = model::OpStats{};
      io_[p.name].op(model::Op::kWrite) = model::OpStats{};
      probes_[p.controller];
    }
  }

  // `n` successful probes of `ms` each on path i's controller.
  void Probes(int i, uint64_t n, double ms) {
    model::ControllerProbeStats& s = probes_[ctrls_[i]];
    for (uint64_t k = 0; k < n; ++k) {
      const auto ns = static_cast<uint64_t>(ms * 1e6);
      s.latency.Observe(ns);
      s.latency_sum_ns += ns;
    }
  }
  void Reads(int i, uint64_t n, double ms) {
    model::OpStats& r = *io_[paths_[i]].op(model::Op::kRead);
    r.completed += n;
    r.time_ns += static_cast<uint64_t>(n * ms * 1e6);
  }
  const model::PathScoring& Window(int i) {
    last_ = stage_.Score(base_.topology, io_, {}, probes_);
    return last_.paths.at(paths_[i]);
  }
  const model::PathScoring& P(int i) { return last_.paths.at(paths_[i]); }

  ScoringStage stage_{ScoringOptions{}};
  model::Snapshot base_;
  std::vector<std::string> paths_, ctrls_;
  std::map<std::string, model::IoStats, std::less<>> io_;
  ScoringStage::ControllerProbes probes_;
  model::Scoring last_;
};

constexpr size_t kRead = model::Index(OpGroup::kRead);
constexpr size_t kWrite = model::Index(OpGroup::kWrite);

TEST_F(ProbeScoringTest, IdlePathsAreScoredFromTheirControllersProbes) {
  Window(0);  // baseline
  Probes(0, 1, 30);
  Probes(1, 1, 1);
  Window(0);
  ASSERT_TRUE(P(0).latency_ewma_seconds[kRead].has_value());
  EXPECT_NEAR(*P(0).latency_ewma_seconds[kRead], 0.030, 1e-9);
  EXPECT_NEAR(*P(1).latency_ewma_seconds[kRead], 0.001, 1e-9);
  EXPECT_LT(P(0).weight[kRead], P(1).weight[kRead]);
  EXPECT_LE(P(0).weight[kRead], 3u);
  // Never idle while the probes keep coming, though no I/O ever ran
  // (idle_windows is 10): path 0 degraded by its latency, path 1 healthy.
  for (int w = 0; w < 15; ++w) {
    Probes(0, 1, 30);
    Probes(1, 1, 1);
    Window(0);
  }
  EXPECT_EQ(P(0).health, model::PathHealth::kDegraded);
  EXPECT_EQ(P(1).health, model::PathHealth::kHealthy);
  EXPECT_EQ(P(0).sample_age_seconds, 0.0);
  EXPECT_EQ(P(1).sample_age_seconds, 0.0);
}

TEST_F(ProbeScoringTest, IoSamplesWinInTheirGroupProbesFillTheOthers) {
  Window(0);
  Reads(0, 100, 0.5);
  Reads(1, 100, 0.5);
  Probes(0, 1, 8);
  Probes(1, 1, 2);
  Window(0);
  EXPECT_NEAR(*P(0).latency_ewma_seconds[kRead], 0.0005, 1e-9);
  EXPECT_NEAR(*P(0).latency_ewma_seconds[kWrite], 0.008, 1e-9);
  EXPECT_NEAR(*P(1).latency_ewma_seconds[kWrite], 0.002, 1e-9);
  EXPECT_EQ(P(0).weight[kRead], 32u);
}

TEST_F(ProbeScoringTest, WithoutProbesAnIdlePathHasNoEwma) {
  probes_.clear();
  Window(0);
  Window(0);
  EXPECT_FALSE(P(0).latency_ewma_seconds[kRead].has_value());
}

TEST_F(ProbeScoringTest, AnUnreachableControllerFailsItsPathsAtOnce) {
  Window(0);
  Probes(0, 1, 1);
  Probes(1, 1, 1);
  Window(0);
  EXPECT_EQ(P(0).health, model::PathHealth::kHealthy);
  // A probe outstanding past its timeout (not yet counted).
  probes_[ctrls_[0]].unreachable = true;
  Window(0);
  EXPECT_EQ(P(0).health, model::PathHealth::kFailed);
  EXPECT_EQ(P(0).weight[kRead], 0u);
  EXPECT_EQ(P(1).weight[kRead], 64u);
}

TEST_F(ProbeScoringTest, AWindowWithATimeoutIsNotClean) {
  Window(0);
  Probes(0, 1, 1);
  Probes(1, 1, 1);
  Window(0);
  // Timed out and completed late within one window: the flag is clear
  // again, the counted timeout still fails the path for this window.
  probes_[ctrls_[0]].failures[model::Index(ProbeFailure::kTimeout)] += 1;
  Window(0);
  EXPECT_EQ(P(0).health, model::PathHealth::kFailed);
  // Then clean windows: degraded until recover_windows (5) have passed.
  for (int w = 0; w < 4; ++w) {
    Probes(0, 1, 1);
    Probes(1, 1, 1);
    Window(0);
    EXPECT_EQ(P(0).health, model::PathHealth::kDegraded) << "window " << w;
    EXPECT_GT(P(0).weight[kRead], 0u);
  }
  Probes(0, 1, 1);
  Probes(1, 1, 1);
  Window(0);
  EXPECT_EQ(P(0).health, model::PathHealth::kHealthy);
}

TEST_F(ProbeScoringTest, NoPermissionToProbeSaysNothingAboutThePath) {
  Window(0);
  probes_[ctrls_[0]].failures[model::Index(ProbeFailure::kUnavailable)] += 3;
  probes_[ctrls_[0]].failures[model::Index(ProbeFailure::kGeneric)] += 1;
  Window(0);
  EXPECT_NE(P(0).health, model::PathHealth::kFailed);
  EXPECT_EQ(P(0).weight[kRead], 32u);
}

}  // namespace
}  // namespace pathwise::scoring

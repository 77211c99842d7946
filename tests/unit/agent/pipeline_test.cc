// SPDX-License-Identifier: Apache-2.0
// The collection pipeline with scripted stages: stage order, the typed
// hand-off from each stage to the next, failing and throwing stages, the
// log-once rule and actuators on the published snapshot.
#include "agent/pipeline.h"

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "agent/agent.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/snapshot_store.h"
#include "scoring/stage.h"
#include "tests/unit/agent/fake_stages.h"
#include "tests/unit/log_capture.h"

namespace pathwise::agent {
namespace {

using ::pathwise::testing::CountingIo;
using ::pathwise::testing::ScriptedTopology;
using ::pathwise::testing::SyntheticTopology;
using ::pathwise::testing::TopologyStep;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

std::vector<std::string> Names(const model::Snapshot& s) {
  std::vector<std::string> out;
  for (const model::CollectorResult& r : s.collectors) out.push_back(r.name);
  return out;
}

// Adds a head_io entry per head, to show a second I/O source adds to what
// the first one read rather than replacing it.
class HeadIo : public collectors::IoSource {
 public:
  explicit HeadIo(std::vector<std::string>* trace) : trace_(trace) {}
  absl::string_view name() const override { return "head_io"; }
  absl::Status Read(const model::Topology& topology,
                    model::IoReading& io) override {
    trace_->push_back("head_io");
    paths_before = io.path_io.size();
    for (const model::Head& h : topology.heads) io.head_io[h.name] = {};
    return absl::OkStatus();
  }
  size_t paths_before = 0;

 private:
  std::vector<std::string>* trace_;
};

TEST(Pipeline, RunsStagesInOrderAndHandsEachItsInputs) {
  ::pathwise::testing::LogCapture logs;
  std::vector<std::string> trace;
  Pipeline p;
  // Added in a different order than they run: the pipeline fixes the order.
  p.SetScoring(
      std::make_unique<scoring::ScoringStage>(scoring::ScoringOptions{}));
  auto io = std::make_unique<CountingIo>("fake_io", &trace);
  CountingIo* io_ptr = io.get();
  p.AddIoSource(std::move(io));
  auto heads = std::make_unique<HeadIo>(&trace);
  HeadIo* heads_ptr = heads.get();
  p.AddIoSource(std::move(heads));
  p.SetTopologySource(std::make_unique<ScriptedTopology>(
      std::vector<TopologyStep>{{SyntheticTopology(2), absl::OkStatus()}},
      &trace));

  model::Snapshot first = p.Collect();
  EXPECT_THAT(trace, ElementsAre("scripted", "fake_io", "head_io"));
  EXPECT_THAT(Names(first),
              ElementsAre("scripted", "fake_io", "head_io", "scoring"));
  EXPECT_TRUE(first.AllCollectorsSucceeded());
  // Topology -> I/O: the sources saw this collection's topology.
  ASSERT_THAT(first.topology.paths, SizeIs(2));
  EXPECT_EQ(io_ptr->paths_seen(), 2u);
  EXPECT_EQ(heads_ptr->paths_before, 2u);
  // I/O -> snapshot: both sources' parts are published.
  EXPECT_THAT(first.path_io, SizeIs(2));
  EXPECT_THAT(first.head_io, SizeIs(1));
  EXPECT_EQ(first.io_source, model::IoSource::kSysfs);
  // Topology + I/O -> scoring: every path scored; no deltas yet.
  ASSERT_TRUE(first.scoring.has_value());
  EXPECT_THAT(first.scoring->paths, SizeIs(2));
  const std::string path = first.topology.paths[0].name;
  EXPECT_FALSE(first.scoring->paths.at(path).latency_ewma_seconds[0]);

  // The second window's read delta (100 reads of 1 ms) reached scoring.
  model::Snapshot second = p.Collect();
  ASSERT_TRUE(second.scoring.has_value());
  ASSERT_TRUE(second.scoring->paths.at(path).latency_ewma_seconds[0]);
  EXPECT_DOUBLE_EQ(*second.scoring->paths.at(path).latency_ewma_seconds[0],
                   0.001);
}

TEST(Pipeline, AThrowingTopologySourceDoesNotStopTheLaterStages) {
  ::pathwise::testing::LogCapture logs;
  std::vector<std::string> trace;
  Pipeline p;
  p.SetTopologySource(std::make_unique<ScriptedTopology>(
      std::vector<TopologyStep>{{{}, absl::OkStatus(), /*throws=*/true}},
      &trace));
  p.AddIoSource(std::make_unique<CountingIo>("fake_io", &trace));
  p.SetScoring(
      std::make_unique<scoring::ScoringStage>(scoring::ScoringOptions{}));
  model::Snapshot s = p.Collect();
  EXPECT_THAT(trace, ElementsAre("scripted", "fake_io"));
  ASSERT_THAT(s.collectors, SizeIs(3));
  EXPECT_FALSE(s.collectors[0].success);
  EXPECT_EQ(s.collectors[0].error, "exception: boom");
  EXPECT_TRUE(s.collectors[1].success);
  EXPECT_TRUE(s.collectors[2].success);
  EXPECT_TRUE(s.scoring.has_value());  // ran, over an empty topology
  EXPECT_FALSE(s.AllCollectorsSucceeded());
  EXPECT_THAT(
      logs.Lines(),
      ElementsAre("warning collector scripted failed: exception: boom"));
}

TEST(Pipeline, AFailingIoSourceKeepsWhatItReadAndScoringStillRuns) {
  ::pathwise::testing::LogCapture logs;
  Pipeline p;
  p.SetTopologySource(
      std::make_unique<ScriptedTopology>(std::vector<TopologyStep>{
          {SyntheticTopology(2), absl::NotFoundError("a: missing")}}));
  p.AddIoSource(std::make_unique<CountingIo>(
      "fake_io", nullptr,
      absl::InvalidArgumentError("b/stat: bad (and 1 more)")));
  p.SetScoring(
      std::make_unique<scoring::ScoringStage>(scoring::ScoringOptions{}));
  model::Snapshot s = p.Collect();
  ASSERT_THAT(s.collectors, SizeIs(3));
  EXPECT_FALSE(s.collectors[0].success);
  EXPECT_EQ(s.collectors[0].error, "a: missing");
  EXPECT_FALSE(s.collectors[1].success);
  EXPECT_EQ(s.collectors[1].error, "b/stat: bad (and 1 more)");
  EXPECT_TRUE(s.collectors[2].success);
  // Partial results of failed stages are kept and handed on.
  EXPECT_THAT(s.topology.paths, SizeIs(2));
  EXPECT_THAT(s.path_io, SizeIs(2));
  ASSERT_TRUE(s.scoring.has_value());
  EXPECT_THAT(s.scoring->paths, SizeIs(2));
}

TEST(Pipeline, LogsAPersistentErrorOnceAndTheRecovery) {
  ::pathwise::testing::LogCapture logs;
  Pipeline p;
  const absl::Status bad = absl::InvalidArgumentError("x/y: malformed");
  p.SetTopologySource(std::make_unique<ScriptedTopology>(
      std::vector<TopologyStep>{{SyntheticTopology(2), bad},
                                {SyntheticTopology(2), bad},
                                {SyntheticTopology(2), bad},
                                {SyntheticTopology(2), absl::OkStatus()}}));
  for (int i = 0; i < 4; ++i) {
    model::Snapshot s = p.Collect();
    ASSERT_THAT(s.collectors, SizeIs(1));
    EXPECT_EQ(s.collectors[0].success, i == 3);
  }
  EXPECT_THAT(logs.Lines(),
              ElementsAre("warning collector scripted failed: x/y: malformed",
                          "info collector scripted recovered"));
}

TEST(Pipeline, WithoutStagesACollectionIsEmpty) {
  Pipeline p;
  model::Snapshot s = p.Collect();
  EXPECT_THAT(s.collectors, IsEmpty());
  EXPECT_FALSE(s.scoring.has_value());
  EXPECT_EQ(s.io_source, model::IoSource::kNone);
}

// Records what it was given and whether that snapshot was already published.
class RecordingActuator : public Actuator {
 public:
  RecordingActuator(const model::SnapshotStore& store, absl::Status status)
      : store_(store), status_(std::move(status)) {}
  absl::string_view name() const override { return "recorder"; }
  absl::Status Act(const model::Snapshot& published) override {
    generations.push_back(published.generation);
    was_published.push_back(store_.Load().get() == &published);
    return status_;
  }
  std::vector<uint64_t> generations;
  std::vector<bool> was_published;

 private:
  const model::SnapshotStore& store_;
  absl::Status status_;
};

class ThrowingActuator : public Actuator {
 public:
  absl::string_view name() const override { return "thrower"; }
  absl::Status Act(const model::Snapshot&) override {
    throw std::runtime_error("no");
  }
};

TEST(Pipeline, ActuatorsActOnThePublishedSnapshotAndCannotFailCollection) {
  ::pathwise::testing::LogCapture logs;
  model::SnapshotStore store;
  Pipeline p;
  p.SetTopologySource(std::make_unique<ScriptedTopology>(
      std::vector<TopologyStep>{{SyntheticTopology(2), absl::OkStatus()}}));
  p.AddActuator(std::make_unique<ThrowingActuator>());
  auto rec = std::make_unique<RecordingActuator>(
      store, absl::UnavailableError("sysfs read-only"));
  RecordingActuator* recorder = rec.get();
  p.AddActuator(std::move(rec));
  Agent agent(p, store, absl::Seconds(1));
  agent.CollectOnce();
  auto s = agent.CollectOnce();
  EXPECT_THAT(recorder->generations, ElementsAre(1, 2));
  EXPECT_THAT(recorder->was_published, ElementsAre(true, true));
  // Actuators are no collection stage and do not make the agent unready.
  EXPECT_THAT(Names(*s), ElementsAre("scripted"));
  EXPECT_TRUE(agent.Health().ready);
  EXPECT_THAT(logs.Lines(),
              ElementsAre("warning actuator thrower failed: exception: no",
                          "warning actuator recorder failed: sysfs read-only"));
}

}  // namespace
}  // namespace pathwise::agent

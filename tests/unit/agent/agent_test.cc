// SPDX-License-Identifier: Apache-2.0
// The agent loop over a pipeline of scripted stages: numbering, topology
// changes, publication and the typed health state; and ErrorList.
#include "agent/agent.h"

#include "agent/pipeline.h"
#include "collectors/collector.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/agent/fake_stages.h"
#include "tests/unit/log_capture.h"

namespace pathwise {
namespace {

using ::pathwise::testing::ScriptedTopology;
using ::pathwise::testing::SyntheticTopology;
using ::pathwise::testing::TopologyStep;
using ::testing::HasSubstr;
using ::testing::SizeIs;

TEST(ErrorList, SummarisesFirstAndCount) {
  collectors::ErrorList e;
  EXPECT_TRUE(e.ToStatus().ok());
  e.Add(absl::OkStatus());
  EXPECT_TRUE(e.ok());
  e.Add(absl::NotFoundError("a: missing"));
  e.Add(absl::InvalidArgumentError("b: bad"));
  e.Add(absl::InvalidArgumentError("c: bad"));
  EXPECT_TRUE(absl::IsNotFound(e.ToStatus()));
  EXPECT_EQ(e.ToStatus().message(), "a: missing (and 2 more)");
}

TEST(Agent, CountsTopologyChangesAndRemovesVanishedObjects) {
  ::pathwise::testing::LogCapture logs;
  agent::Pipeline pipeline;
  pipeline.SetTopologySource(
      std::make_unique<ScriptedTopology>(std::vector<TopologyStep>{
          {SyntheticTopology(2), absl::OkStatus()},  // initial: no change
          {SyntheticTopology(2), absl::OkStatus()},  // same
          {SyntheticTopology(1), absl::OkStatus()},  // a path vanishes
          {SyntheticTopology(2), absl::OkStatus()},  // and comes back
      }));
  model::SnapshotStore store;
  agent::Agent a(pipeline, store, absl::Seconds(1));
  std::vector<uint64_t> changes;
  std::vector<size_t> paths;
  for (int i = 0; i < 4; ++i) {
    auto s = a.CollectOnce();
    EXPECT_EQ(s->generation, static_cast<uint64_t>(i + 1));
    EXPECT_NE(s->collected_at, absl::InfinitePast());
    EXPECT_EQ(store.Load(), s);
    changes.push_back(s->topology_changes_total);
    paths.push_back(s->topology.paths.size());
  }
  EXPECT_THAT(changes, ::testing::ElementsAre(0, 0, 1, 2));
  EXPECT_THAT(paths, ::testing::ElementsAre(2, 2, 1, 2));
}

TEST(Agent, HealthNeedsOneSuccessfulCollection) {
  ::pathwise::testing::LogCapture logs;
  agent::Pipeline pipeline;
  pipeline.SetTopologySource(
      std::make_unique<ScriptedTopology>(std::vector<TopologyStep>{
          {SyntheticTopology(2), absl::UnavailableError("class/nvme: oops")},
          {SyntheticTopology(2), absl::OkStatus()},
          {SyntheticTopology(2), absl::UnavailableError("class/nvme: oops")}}));
  model::SnapshotStore store;
  agent::Agent a(pipeline, store, absl::Seconds(1));
  model::Health h = a.Health();  // nothing collected yet
  EXPECT_FALSE(h.ok());
  EXPECT_FALSE(h.ready);
  EXPECT_EQ(h.reason, "not ready: no collection yet");
  EXPECT_THAT(h.stages, ::testing::IsEmpty());

  a.CollectOnce();
  h = a.Health();
  EXPECT_FALSE(h.ready);
  EXPECT_TRUE(h.live);
  EXPECT_EQ(h.reason, "not ready: no collection has succeeded yet");
  ASSERT_THAT(h.stages, SizeIs(1));
  EXPECT_FALSE(h.stages[0].success);

  a.CollectOnce();
  h = a.Health();
  EXPECT_TRUE(h.ok());
  EXPECT_EQ(h.reason, "");

  a.CollectOnce();  // a later failure shows in the stages, not as unhealthy
  h = a.Health();
  EXPECT_TRUE(h.ok());
  ASSERT_THAT(h.stages, SizeIs(1));
  EXPECT_EQ(h.stages[0].name, "scripted");
  EXPECT_THAT(h.stages[0].error, HasSubstr("class/nvme: oops"));
}

// A host without NVMe multipath: healthy (collection works), with the
// notice in the health and in the log, once at the start and once per
// change, not once per collection.
TEST(Agent, NoMultipathIsHealthyAndLoggedOncePerChange) {
  ::pathwise::testing::LogCapture logs;
  model::Topology none;
  none.subsystem_class = false;
  agent::Pipeline pipeline;
  pipeline.SetTopologySource(
      std::make_unique<ScriptedTopology>(std::vector<TopologyStep>{
          {none, absl::OkStatus()},
          {none, absl::OkStatus()},
          {none, absl::OkStatus()},
          {SyntheticTopology(2), absl::OkStatus()},  // multipath appears
          {SyntheticTopology(2), absl::OkStatus()},
          {none, absl::OkStatus()},  // and goes
      }));
  model::SnapshotStore store;
  agent::Agent a(pipeline, store, absl::Seconds(1));
  const std::string notice =
      "no NVMe multipath subsystems: is nvme_core loaded with multipath=Y? "
      "(no /sys/class/nvme-subsystem: nvme_core is not loaded)";
  for (int i = 0; i < 3; ++i) a.CollectOnce();
  model::Health h = a.Health();
  EXPECT_TRUE(h.ok()) << h.reason;
  EXPECT_EQ(h.notice, notice);
  EXPECT_THAT(logs.Lines(), ::testing::ElementsAre("warning " + notice));
  a.CollectOnce();
  a.CollectOnce();
  EXPECT_EQ(a.Health().notice, "");
  a.CollectOnce();
  EXPECT_THAT(logs.Lines(), ::testing::ElementsAre(
                                "warning " + notice,
                                "info NVMe multipath subsystems found: 1 of 1",
                                "warning " + notice));
}

}  // namespace
}  // namespace pathwise

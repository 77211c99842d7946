// The collector registry and the agent loop, with fake collectors.
#include "agent/agent.h"

#include <stdexcept>

#include "collectors/collector.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/synthetic.h"
#include "tests/unit/log_capture.h"

namespace pathwise {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

// Serves a scripted sequence of (topology, status) pairs.
class ScriptedCollector : public collectors::Collector {
 public:
  struct Step {
    model::Topology topology;
    absl::Status status;
  };
  explicit ScriptedCollector(std::vector<Step> steps)
      : steps_(std::move(steps)) {}
  absl::string_view name() const override { return "scripted"; }
  absl::Status Collect(model::Snapshot& s) override {
    const Step& step = steps_[std::min(i_++, steps_.size() - 1)];
    s.topology = step.topology;
    return step.status;
  }

 private:
  std::vector<Step> steps_;
  size_t i_ = 0;
};

class ThrowingCollector : public collectors::Collector {
 public:
  absl::string_view name() const override { return "throwing"; }
  absl::Status Collect(model::Snapshot&) override {
    throw std::runtime_error("boom");
  }
};

class FailingInitCollector : public collectors::Collector {
 public:
  absl::string_view name() const override { return "noinit"; }
  absl::Status Init() override { return absl::UnavailableError("no way"); }
  absl::Status Collect(model::Snapshot&) override {
    ADD_FAILURE() << "Collect() called after failed Init()";
    return absl::OkStatus();
  }
};

model::Topology Synthetic(int controllers) {
  return model::MakeSyntheticSnapshot(
             {.controllers_per_subsystem = controllers})
      .topology;
}

TEST(CollectorRegistry, ExceptionsAndInitFailuresBecomeFailures) {
  testing::LogCapture logs;
  collectors::CollectorRegistry reg;
  reg.Add(std::make_unique<ThrowingCollector>());
  reg.Add(std::make_unique<FailingInitCollector>());
  reg.Add(std::make_unique<ScriptedCollector>(
      std::vector<ScriptedCollector::Step>{{Synthetic(2), absl::OkStatus()}}));
  reg.InitAll();
  model::Snapshot s;
  reg.CollectAll(s);
  ASSERT_THAT(s.collectors, SizeIs(3));
  EXPECT_FALSE(s.collectors[0].success);
  EXPECT_THAT(s.collectors[0].error, HasSubstr("boom"));
  EXPECT_FALSE(s.collectors[1].success);
  EXPECT_TRUE(s.collectors[2].success);
  EXPECT_EQ(s.topology.paths.size(), 2u);  // the rest is still collected
}

TEST(CollectorRegistry, LogsAPersistentErrorOnceAndTheRecovery) {
  testing::LogCapture logs;
  collectors::CollectorRegistry reg;
  const absl::Status bad = absl::InvalidArgumentError("x/y: malformed");
  reg.Add(std::make_unique<ScriptedCollector>(
      std::vector<ScriptedCollector::Step>{{Synthetic(2), bad},
                                           {Synthetic(2), bad},
                                           {Synthetic(2), bad},
                                           {Synthetic(2), absl::OkStatus()}}));
  reg.InitAll();
  for (int i = 0; i < 4; ++i) {
    model::Snapshot s;
    reg.CollectAll(s);
    EXPECT_EQ(s.collectors[0].success, i == 3);
  }
  EXPECT_THAT(logs.Lines(),
              ::testing::ElementsAre(
                  "warning collector scripted failed: x/y: malformed",
                  "info collector scripted recovered"));
}

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
  testing::LogCapture logs;
  collectors::CollectorRegistry reg;
  reg.Add(
      std::make_unique<ScriptedCollector>(std::vector<ScriptedCollector::Step>{
          {Synthetic(2), absl::OkStatus()},  // initial scan: not a change
          {Synthetic(2), absl::OkStatus()},  // same
          {Synthetic(1), absl::OkStatus()},  // a controller and its path vanish
          {Synthetic(2), absl::OkStatus()},  // and come back
      }));
  reg.InitAll();
  model::SnapshotStore store;
  agent::Agent a(reg, store, absl::Seconds(1));
  std::vector<uint64_t> changes;
  std::vector<size_t> paths;
  for (int i = 0; i < 4; ++i) {
    auto s = a.CollectOnce();
    EXPECT_EQ(s->generation, static_cast<uint64_t>(i + 1));
    EXPECT_EQ(store.Load(), s);
    changes.push_back(s->topology_changes_total);
    paths.push_back(s->topology.paths.size());
  }
  EXPECT_THAT(changes, ::testing::ElementsAre(0, 0, 1, 2));
  EXPECT_THAT(paths, ::testing::ElementsAre(2, 2, 1, 2));
}

TEST(Agent, HealthzNeedsOneSuccessfulCollection) {
  testing::LogCapture logs;
  collectors::CollectorRegistry reg;
  reg.Add(
      std::make_unique<ScriptedCollector>(std::vector<ScriptedCollector::Step>{
          {Synthetic(2), absl::UnavailableError("class/nvme: oops")},
          {Synthetic(2), absl::OkStatus()},
          {Synthetic(2), absl::UnavailableError("class/nvme: oops")}}));
  reg.InitAll();
  model::SnapshotStore store;
  agent::Agent a(reg, store, absl::Seconds(1));
  EXPECT_EQ(a.Healthz().status, 503);  // nothing collected yet
  a.CollectOnce();
  auto h = a.Healthz();
  EXPECT_EQ(h.status, 503);
  EXPECT_THAT(h.body, HasSubstr("no collection has succeeded"));
  a.CollectOnce();
  EXPECT_EQ(a.Healthz().status, 200);
  a.CollectOnce();  // a later failure shows in the body, not as unhealthy
  h = a.Healthz();
  EXPECT_EQ(h.status, 200);
  EXPECT_THAT(h.body,
              HasSubstr("collector scripted: failed: class/nvme: oops"));
}

}  // namespace
}  // namespace pathwise

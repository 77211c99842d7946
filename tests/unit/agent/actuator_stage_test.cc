// SPDX-License-Identifier: Apache-2.0
// Actuators in the pipeline and the agent: each collection carries what
// they reported so far, they act on the published snapshot, and
// Agent::Shutdown() stops them and republishes the last snapshot with
// their final report.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "agent/agent.h"
#include "agent/pipeline.h"
#include "model/snapshot_store.h"

namespace pathwise::agent {
namespace {

// Counts what it is asked to do; its report is one decision per Act (and
// one more for Stop), as a restore would add.
class CountingActuator : public Actuator {
 public:
  explicit CountingActuator(std::vector<std::string>* trace) : trace_(trace) {}
  absl::string_view name() const override { return "counting"; }
  absl::Status Act(const model::Snapshot& published) override {
    trace_->push_back("act " + std::to_string(published.generation));
    ++decisions_;
    return absl::OkStatus();
  }
  void Report(model::Snapshot& next) const override {
    model::ActuatorReport r;
    r.mode = model::ActuateMode::kOn;
    r.decisions_total[{"nvme-subsys0", model::Iopolicy::kNuma,
                       model::Iopolicy::kQueueDepth,
                       model::DecisionResult::kApplied}] = decisions_;
    next.actuator = r;
  }
  void Stop() override {
    trace_->push_back("stop");
    ++decisions_;
  }

 private:
  std::vector<std::string>* trace_;
  uint64_t decisions_ = 0;
};

uint64_t Decisions(const model::Snapshot& s) {
  if (!s.actuator || s.actuator->decisions_total.empty()) return 0;
  return s.actuator->decisions_total.begin()->second;
}

TEST(ActuatorStage, ReportsTravelWithTheNextSnapshotAndShutdownRepublishes) {
  std::vector<std::string> trace;
  Pipeline pipeline;
  pipeline.AddActuator(std::make_unique<CountingActuator>(&trace));
  model::SnapshotStore store;
  Agent agent(pipeline, store, absl::Seconds(1));

  std::shared_ptr<const model::Snapshot> s1 = agent.CollectOnce();
  EXPECT_EQ(Decisions(*s1), 0u);  // reported before it acted
  std::shared_ptr<const model::Snapshot> s2 = agent.CollectOnce();
  EXPECT_EQ(Decisions(*s2), 1u);  // what it did on s1
  EXPECT_EQ(trace, (std::vector<std::string>{"act 1", "act 2"}));

  agent.Shutdown();
  EXPECT_EQ(trace.back(), "stop");
  std::shared_ptr<const model::Snapshot> last = store.Load();
  EXPECT_EQ(last->generation, 3u);
  EXPECT_EQ(Decisions(*last), 3u);  // two acts and the stop
  EXPECT_EQ(s2->generation, 2u);    // published snapshots stay as they were
  EXPECT_EQ(Decisions(*s2), 1u);
}

TEST(ActuatorStage, ShutdownWithoutActuatorsPublishesNothing) {
  Pipeline pipeline;
  model::SnapshotStore store;
  Agent agent(pipeline, store, absl::Seconds(1));
  agent.CollectOnce();
  agent.Shutdown();
  EXPECT_EQ(store.Load()->generation, 1u);
  EXPECT_FALSE(store.Load()->actuator.has_value());
}

TEST(ActuatorStage, ShutdownBeforeAnyCollectionOnlyStops) {
  std::vector<std::string> trace;
  Pipeline pipeline;
  pipeline.AddActuator(std::make_unique<CountingActuator>(&trace));
  model::SnapshotStore store;
  Agent agent(pipeline, store, absl::Seconds(1));
  agent.Shutdown();
  EXPECT_EQ(trace, std::vector<std::string>{"stop"});
  EXPECT_EQ(store.Load(), nullptr);
}

}  // namespace
}  // namespace pathwise::agent

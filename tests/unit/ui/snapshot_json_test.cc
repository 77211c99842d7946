// SPDX-License-Identifier: Apache-2.0
// ui/snapshot_json: the agent's /api/v1/snapshot document parsed back into
// the model, checked against exporters::SnapshotToJson both ways.
#include "ui/snapshot_json.h"

#include "exporters/topology_json.h"
#include "gtest/gtest.h"
#include "model/synthetic.h"
#include "tests/unit/ui/test_snapshots.h"

namespace pathwise::ui {
namespace {

using nlohmann::json;

model::Snapshot RoundTrip(const model::Snapshot& s) {
  absl::StatusOr<model::Snapshot> back =
      SnapshotFromJsonText(exporters::JsonText(exporters::SnapshotToJson(s)));
  EXPECT_TRUE(back.ok()) << back.status();
  return back.ok() ? *std::move(back) : model::Snapshot{};
}

TEST(SnapshotJsonTest, RoundTripReproducesTheDocument) {
  const auto [a, b] = testing::MakeSnapshotPair();
  for (const model::Snapshot* s : {&a, &b}) {
    const json want = exporters::SnapshotToJson(*s);
    EXPECT_EQ(exporters::SnapshotToJson(RoundTrip(*s)), want);
  }
  const model::Snapshot empty;
  EXPECT_EQ(exporters::SnapshotToJson(RoundTrip(empty)),
            exporters::SnapshotToJson(empty));
}

TEST(SnapshotJsonTest, RoundTripKeepsTheModelValues) {
  const model::Snapshot s = testing::MakeSnapshotPair().second;
  const model::Snapshot back = RoundTrip(s);
  EXPECT_EQ(back.generation, 42u);
  EXPECT_EQ(back.collected_at, s.collected_at);
  EXPECT_EQ(back.io_source, model::IoSource::kBpf);
  ASSERT_EQ(back.topology.paths.size(), 4u);
  EXPECT_EQ(back.topology.paths[1].ana_state, model::AnaState::kNonOptimized);
  EXPECT_EQ(back.topology.paths[2].diag, s.topology.paths[2].diag);
  EXPECT_EQ(back.topology.controllers[0].diag, s.topology.controllers[0].diag);
  EXPECT_EQ(back.topology.subsystems[0].iopolicy, model::Iopolicy::kRoundRobin);
  for (const auto& [name, io] : s.path_io) {
    for (model::Op op : model::kAllOps) {
      ASSERT_EQ(back.path_io.at(name).op(op).has_value(),
                io.op(op).has_value());
      if (io.op(op))
        EXPECT_EQ(*back.path_io.at(name).op(op), *io.op(op)) << name;
    }
  }
  EXPECT_EQ(back.path_nvme.at("nvme0c1n1"), s.path_nvme.at("nvme0c1n1"));
  EXPECT_EQ(back.controller_probe.at("nvme0"), s.controller_probe.at("nvme0"));
  EXPECT_TRUE(back.controller_probe.at("nvme3").unreachable);
  ASSERT_TRUE(back.scoring.has_value());
  EXPECT_EQ(back.scoring->paths.at("nvme0c1n1").health,
            model::PathHealth::kDegraded);
  EXPECT_EQ(back.scoring->paths.at("nvme0c1n1").weight[0], 2u);
  EXPECT_EQ(back.scoring->iopolicy_recommended.at("nvme-subsys0").iopolicy,
            model::Iopolicy::kQueueDepth);
  ASSERT_TRUE(back.actuator.has_value());
  EXPECT_EQ(back.actuator->last_decision.at("nvme-subsys0").result,
            model::DecisionResult::kDryRun);
  EXPECT_EQ(back.actuator->last_decision.at("nvme-subsys0").at,
            s.actuator->last_decision.at("nvme-subsys0").at);
  ASSERT_EQ(back.collectors.size(), s.collectors.size());
  EXPECT_FALSE(back.collectors.back().success);
}

TEST(SnapshotJsonTest, UnknownKernelStatesStayVerbatim) {
  model::Snapshot s = model::MakeSyntheticSnapshot({1, 1, 2});
  s.topology.paths[0].ana_state = model::AnaState::kUnknown;
  s.topology.paths[0].unknown_ana_state = "weird-state";
  s.topology.subsystems[0].iopolicy = model::Iopolicy::kUnknown;
  s.topology.subsystems[0].unknown_iopolicy = "fancy";
  const model::Snapshot back = RoundTrip(s);
  EXPECT_EQ(back.topology.paths[0].unknown_ana_state, "weird-state");
  EXPECT_EQ(back.topology.subsystems[0].unknown_iopolicy, "fancy");
}

TEST(SnapshotJsonTest, RejectsWhatIsNotAPathwiseSnapshot) {
  EXPECT_EQ(SnapshotFromJsonText("<html>").status().message(), "not JSON");
  EXPECT_EQ(SnapshotFromJsonText("{\"error\":\"no collection yet\"}")
                .status()
                .message(),
            "not a pathwise snapshot (no \"generation\", \"subsystems\" and "
            "\"io\")");
  json j = exporters::SnapshotToJson(model::MakeSyntheticSnapshot({1, 1, 2}));
  json wrong_type = j;
  wrong_type["generation"] = "x";
  EXPECT_EQ(SnapshotFromJson(wrong_type).status().message(),
            "malformed pathwise snapshot: snapshot.generation: not a "
            "non-negative integer");
  json layout = j;
  layout["latency_histogram"]["upper_bounds_seconds"][3] = 0.5;
  EXPECT_EQ(SnapshotFromJson(layout).status().message(),
            "malformed pathwise snapshot: snapshot.latency_histogram: bucket "
            "layout differs from this build's (another pathwise version?)");
  json health = exporters::SnapshotToJson(testing::MakeSnapshotPair().second);
  health["scoring"]["paths"]["nvme0c0n1"]["health"] = "sick";
  EXPECT_EQ(SnapshotFromJson(health).status().message(),
            "malformed pathwise snapshot: scoring.paths.nvme0c0n1.health: "
            "unknown value \"sick\"");
  json missing = j;
  missing["subsystems"][0].erase("nqn");
  EXPECT_EQ(SnapshotFromJson(missing).status().message(),
            "malformed pathwise snapshot: subsystems[0].nqn: missing");
}

}  // namespace
}  // namespace pathwise::ui

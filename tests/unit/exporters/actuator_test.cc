// SPDX-License-Identifier: Apache-2.0
// The actuator's report as the exporters show it: the mode StateSet, the
// decisions counter (a golden file, which unit.cli runs promtool over), and
// each subsystem's last decision in the topology JSON.
#include <string>

#include "absl/strings/match.h"
#include "exporters/prometheus_families.h"
#include "exporters/topology_json.h"
#include "gtest/gtest.h"
#include "model/synthetic.h"
#include "tests/unit/golden.h"

namespace pathwise::exporters {
namespace {

using model::DecisionResult;
using model::Iopolicy;

model::ActuatorReport Report() {
  model::ActuatorReport r;
  r.mode = model::ActuateMode::kOn;
  r.decisions_total[{"nvme-subsys0", Iopolicy::kNuma, Iopolicy::kQueueDepth,
                     DecisionResult::kRefused}] = 1;
  r.decisions_total[{"nvme-subsys0", Iopolicy::kNuma, Iopolicy::kRoundRobin,
                     DecisionResult::kApplied}] = 1;
  r.decisions_total[{"nvme-subsys0", Iopolicy::kRoundRobin, Iopolicy::kNuma,
                     DecisionResult::kApplied}] = 1;
  r.decisions_total[{"nvme-subsys1", Iopolicy::kNuma, Iopolicy::kRoundRobin,
                     DecisionResult::kFailed}] = 2;
  r.last_decision["nvme-subsys0"] = {
      Iopolicy::kRoundRobin,
      Iopolicy::kNuma,
      DecisionResult::kApplied,
      "restore on exit: numa is what pathwise found",
      "",
      true,
      absl::FromUnixSeconds(1'800'000'000)};
  return r;
}

model::Snapshot Snap() {
  model::Snapshot s;
  s.generation = 7;
  s.collected_at = absl::FromUnixSeconds(1'800'000'000);
  model::Subsystem sub;
  sub.name = "nvme-subsys0";
  sub.nqn = "nqn.2026-11.io.pathwise:testbed";
  sub.iopolicy = Iopolicy::kNuma;
  s.topology.subsystems.push_back(sub);
  sub.name = "nvme-subsys1";
  s.topology.subsystems.push_back(sub);
  s.actuator = Report();
  return s;
}

std::string ActuatorFamilies(const model::Snapshot& s) {
  // Only the actuator's families: the rest have goldens of their own.
  std::vector<prometheus::MetricFamily> fams = BuildFamilies(&s, {"x", "y"});
  std::erase_if(fams, [](const prometheus::MetricFamily& f) {
    return !absl::StartsWith(f.name, "pathwise_actuator_");
  });
  return SerializeText(fams);
}

TEST(ActuatorExportTest, ModeAndDecisions) {
  testing::ExpectMatchesGolden(ActuatorFamilies(Snap()), "actuator.prom");
}

TEST(ActuatorExportTest, OffExportsOnlyItsMode) {
  model::Snapshot s = Snap();
  s.actuator = model::ActuatorReport{};
  EXPECT_EQ(ActuatorFamilies(s),
            "# HELP pathwise_actuator_mode The iopolicy actuator's mode "
            "(--actuate) as a StateSet (off, dry-run, on): 1 for the "
            "configured mode, 0 for the others.\n"
            "# TYPE pathwise_actuator_mode gauge\n"
            "pathwise_actuator_mode{mode=\"off\"} 1\n"
            "pathwise_actuator_mode{mode=\"dry-run\"} 0\n"
            "pathwise_actuator_mode{mode=\"on\"} 0\n");
  // Without an actuator (snapshot, topology, the goldens): nothing.
  s.actuator.reset();
  EXPECT_EQ(ActuatorFamilies(s), "");
}

std::string Families(const model::Snapshot& s, absl::string_view prefix) {
  std::vector<prometheus::MetricFamily> fams = BuildFamilies(&s, {"x", "y"});
  std::erase_if(fams, [&](const prometheus::MetricFamily& f) {
    return !absl::StartsWith(f.name, prefix);
  });
  return SerializeText(fams);
}

TEST(ActuatorExportTest, HeadIostatsHeadsAndChanges) {
  model::Snapshot s = Snap();
  EXPECT_EQ(Families(s, "pathwise_head_iostats_"), "");  // keep: nothing
  s.head_iostats.emplace();
  s.head_iostats->mode = model::HeadIostatsMode::kOff;
  s.head_iostats->heads_off = 3;
  s.head_iostats
      ->changes_total[{.restore = false, .result = DecisionResult::kApplied}] =
      4;
  s.head_iostats
      ->changes_total[{.restore = true, .result = DecisionResult::kApplied}] =
      1;
  s.head_iostats
      ->changes_total[{.restore = false, .result = DecisionResult::kFailed}] =
      1;
  testing::ExpectMatchesGolden(Families(s, "pathwise_head_iostats_"),
                               "head_iostats.prom");
}

TEST(ActuatorExportTest, TopologyJsonShowsTheLastDecision) {
  const model::Snapshot s = Snap();
  const nlohmann::json j = TopologyToJson(s.topology, nullptr, &*s.actuator);
  const nlohmann::json& d = j["subsystems"][0]["actuator_last_decision"];
  EXPECT_EQ(d["from"], "round-robin");
  EXPECT_EQ(d["to"], "numa");
  EXPECT_EQ(d["result"], "applied");
  EXPECT_EQ(d["restore"], true);
  EXPECT_EQ(d["reason"], "restore on exit: numa is what pathwise found");
  EXPECT_EQ(d["error"], "");
  EXPECT_EQ(d["at"], "2027-01-15T08:00:00+00:00");
  EXPECT_FALSE(j["subsystems"][1].contains("actuator_last_decision"));
  // Without the report the JSON is as before.
  EXPECT_FALSE(TopologyToJson(s.topology)["subsystems"][0].contains(
      "actuator_last_decision"));
  // The snapshot JSON carries it too.
  EXPECT_EQ(
      SnapshotToJson(s)["subsystems"][0]["actuator_last_decision"]["result"],
      "applied");
}

}  // namespace
}  // namespace pathwise::exporters

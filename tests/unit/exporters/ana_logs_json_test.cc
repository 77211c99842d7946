// SPDX-License-Identifier: Apache-2.0
// The snapshot JSON's "ana_logs": present only where the prober read ANA
// log pages, with each controller's groups, read time and last error.
#include <gtest/gtest.h>

#include "exporters/topology_json.h"
#include "model/topology.h"

namespace pathwise::exporters {
namespace {

TEST(AnaLogsJsonTest, AbsentWithoutReads) {
  model::Snapshot snap;
  EXPECT_FALSE(SnapshotToJson(snap).contains("ana_logs"));
}

TEST(AnaLogsJsonTest, GroupsStatesAndErrors) {
  model::Snapshot snap;
  model::ControllerAnaLog ok;
  ok.change_count = 7;
  ok.groups = {{1, model::AnaState::kInaccessible, {1, 3}},
               {2, model::AnaState::kNonOptimized, {}}};
  ok.read_at = absl::FromUnixSeconds(1700000000);
  snap.controller_ana["nvme0"] = ok;
  model::ControllerAnaLog failed;
  failed.error = "Get Log Page: Permission denied";
  snap.controller_ana["nvme1"] = failed;
  const nlohmann::json j = SnapshotToJson(snap);
  ASSERT_TRUE(j.contains("ana_logs"));
  const nlohmann::json& a = j["ana_logs"];
  EXPECT_EQ(a["nvme0"]["change_count"], 7);
  EXPECT_EQ(a["nvme0"]["groups"][0]["id"], 1);
  EXPECT_EQ(a["nvme0"]["groups"][0]["state"], "inaccessible");
  EXPECT_EQ(a["nvme0"]["groups"][0]["nsids"], nlohmann::json({1, 3}));
  EXPECT_EQ(a["nvme0"]["groups"][1]["state"], "non-optimized");
  EXPECT_EQ(a["nvme0"]["groups"][1]["nsids"], nlohmann::json::array());
  EXPECT_EQ(a["nvme0"]["read_at"], "2023-11-14T22:13:20+00:00");
  EXPECT_EQ(a["nvme0"]["error"], "");
  EXPECT_TRUE(a["nvme1"]["read_at"].is_null());
  EXPECT_EQ(a["nvme1"]["error"], "Get Log Page: Permission denied");
  EXPECT_TRUE(a["nvme1"]["groups"].empty());
}

}  // namespace
}  // namespace pathwise::exporters

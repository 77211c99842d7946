// SPDX-License-Identifier: Apache-2.0
// The kernel's diag/ counters of paths, heads and controllers: read from
// fixture sysfs trees through the topology collector (the captured testbed
// trees, whose 6.1 and 6.12 kernels have none, and copies of them given a
// diag/ group as newer kernels have it), and exported as metrics and JSON.
//
// Like fixture_test.cc, each process binds the tree over /sys in a private
// mount namespace, as the agent does with --path.sysfs, so this needs root.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "collectors/nvme_topology_collector.h"
#include "collectors/sysfs_namespace.h"
#include "collectors/topology_builder.h"
#include "exporters/prometheus_families.h"
#include "exporters/topology_json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/collectors/sys_fixture.h"

namespace pathwise {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::SizeIs;

const exporters::BuildInfo kBuild{"0.0.0-test", "diag"};

using testing::FixtureDir;

class DiagCountersTest : public testing::SysFixtureTest {
 protected:
  // One topology scan of `root`, presented at /sys as the agent does with
  // --path.sysfs.
  absl::Status Scan(const std::string& root, model::Topology& topo) {
    BindOverSys(root);
    collectors::NvmeTopologyCollector c{collectors::SysfsReader(root)};
    return c.Read(topo);
  }

  // Writes `value` to <device dir>/diag/<attr>; `dev` is relative to the
  // root (block/<disk> or class/nvme/<controller>), a symlink as in sysfs.
  static void Put(const std::string& root, const std::string& dev,
                  const std::string& attr, const std::string& value) {
    const fs::path dir = fs::canonical(root + "/" + dev) / "diag";
    fs::create_directories(dir);
    std::ofstream(dir / attr) << value << "\n";
  }

  // A copy of tcp2-6.12 with the diag/ group of a newer kernel: a distinct
  // value in every counter, and no reconnect_count on nvme1 (the kernel
  // hides an attribute a device does not have, as it does for PCIe).
  std::string WithDiag() {
    const std::string root = CopyOf("tcp2-6.12");
    Put(root, "block/nvme0c0n1", "multipath_failover_count", "3");
    Put(root, "block/nvme0c0n1", "command_retries_count", "5");
    Put(root, "block/nvme0c0n1", "command_error_count", "7");
    Put(root, "block/nvme0c1n1", "multipath_failover_count", "0");
    Put(root, "block/nvme0c1n1", "command_retries_count", "11");
    Put(root, "block/nvme0c1n1", "command_error_count", "13");
    Put(root, "block/nvme0n1", "io_requeue_no_usable_path_count", "17");
    Put(root, "block/nvme0n1", "io_fail_no_available_path_count", "19");
    Put(root, "class/nvme/nvme0", "command_error_count", "23");
    Put(root, "class/nvme/nvme0", "reset_count", "29");
    Put(root, "class/nvme/nvme0", "reconnect_count", "31");
    Put(root, "class/nvme/nvme1", "command_error_count", "0");
    Put(root, "class/nvme/nvme1", "reset_count",
        "9223372036854775807");  // the largest value the model holds
    return root;
  }
};

std::string Exposition(const model::Topology& topo) {
  model::Snapshot s;
  s.topology = topo;
  return exporters::SerializeText(exporters::BuildFamilies(&s, kBuild));
}

// promtool's verdict on `text` (the exposition's lint, as CI runs it on the
// agent's output).
bool PromtoolClean(const std::string& text, std::string* out) {
  char path[] = "/tmp/pathwise-diag-prom-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return false;
  std::ofstream(path) << text;
  const std::string cmd =
      std::string("promtool check metrics <") + path + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  char buf[512];
  while (p != nullptr && fgets(buf, sizeof(buf), p) != nullptr) *out += buf;
  const int rc = p == nullptr ? -1 : pclose(p);
  close(fd);
  std::remove(path);
  return rc == 0;
}

TEST_F(DiagCountersTest, CapturedKernelsHaveNoneAndNothingIsExported) {
  for (const std::string name : {"tcp2-6.12", "pcie2-6.1"}) {
    SCOPED_TRACE(name);
    const std::string root = FixtureDir(name);
    ASSERT_TRUE(fs::is_directory(root + "/class/nvme")) << root;
    model::Topology t;
    ASSERT_TRUE(Scan(root, t).ok());
    ASSERT_THAT(t.paths, SizeIs(2));
    for (const model::Path& p : t.paths) {
      EXPECT_FALSE(fs::exists(root + "/block/" + p.name + "/diag"));
      EXPECT_EQ(p.diag, model::PathDiag{});
    }
    for (const model::Head& h : t.heads) EXPECT_EQ(h.diag, model::HeadDiag{});
    for (const model::Controller& c : t.controllers) {
      EXPECT_EQ(c.diag, model::ControllerDiag{});
    }
    EXPECT_THAT(Exposition(t), Not(HasSubstr("_diag_")));
    EXPECT_THAT(exporters::TopologyToJson(t).dump(),
                Not(HasSubstr("\"diag\"")));
    ASSERT_TRUE(collectors::UnbindSys().ok());
    --bound_;
  }
}

TEST_F(DiagCountersTest, PresentCountersAreReadAndExported) {
  const std::string root = WithDiag();
  model::Topology t;
  const absl::Status st = Scan(root, t);
  ASSERT_TRUE(st.ok()) << st;

  const model::Path* p0 = t.FindPath("nvme0c0n1");
  const model::Path* p1 = t.FindPath("nvme0c1n1");
  ASSERT_NE(p0, nullptr);
  ASSERT_NE(p1, nullptr);
  EXPECT_EQ(p0->diag.failovers, 3u);
  EXPECT_EQ(p0->diag.command_retries, 5u);
  EXPECT_EQ(p0->diag.command_errors, 7u);
  EXPECT_EQ(p1->diag.failovers, 0u);  // present and zero is not absent
  EXPECT_EQ(p1->diag.command_retries, 11u);
  EXPECT_EQ(p1->diag.command_errors, 13u);
  ASSERT_THAT(t.heads, SizeIs(1));
  EXPECT_EQ(t.heads[0].diag.requeued_no_usable_path, 17u);
  EXPECT_EQ(t.heads[0].diag.failed_no_available_path, 19u);
  const model::Controller* c0 = t.FindController("nvme0");
  const model::Controller* c1 = t.FindController("nvme1");
  ASSERT_NE(c0, nullptr);
  ASSERT_NE(c1, nullptr);
  EXPECT_EQ(c0->diag.command_errors, 23u);
  EXPECT_EQ(c0->diag.resets, 29u);
  EXPECT_EQ(c0->diag.reconnects, 31u);
  EXPECT_EQ(c1->diag.command_errors, 0u);
  EXPECT_EQ(c1->diag.resets, 9223372036854775807u);
  EXPECT_EQ(c1->diag.reconnects, std::nullopt);

  const std::string text = Exposition(t);
  const std::string path0 =
      "subsystem=\"nvme-subsys0\",head=\"nvme0n1\",path=\"nvme0c0n1\","
      "controller=\"" +
      p0->controller + "\"";
  EXPECT_THAT(
      text, HasSubstr("pathwise_path_diag_failovers_total{" + path0 + "} 3\n"));
  EXPECT_THAT(text, HasSubstr("pathwise_path_diag_command_retries_total{" +
                              path0 + "} 5\n"));
  EXPECT_THAT(text, HasSubstr("pathwise_path_diag_command_errors_total{" +
                              path0 + "} 7\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE pathwise_path_diag_failovers_total "
                              "counter\n"));
  EXPECT_THAT(text,
              HasSubstr("pathwise_head_diag_io_requeued_no_usable_path_total{"
                        "subsystem=\"nvme-subsys0\",head=\"nvme0n1\"} 17\n"));
  EXPECT_THAT(text,
              HasSubstr("pathwise_head_diag_io_failed_no_available_path_total{"
                        "subsystem=\"nvme-subsys0\",head=\"nvme0n1\"} 19\n"));
  EXPECT_THAT(text, HasSubstr("pathwise_controller_diag_command_errors_total{"
                              "controller=\"nvme0\"} 23\n"));
  EXPECT_THAT(text, HasSubstr("pathwise_controller_diag_resets_total{"
                              "controller=\"nvme0\"} 29\n"));
  EXPECT_THAT(text, HasSubstr("pathwise_controller_diag_reconnects_total{"
                              "controller=\"nvme0\"} 31\n"));
  // The counter nvme1 lacks has no series, not a 0.
  EXPECT_THAT(text, Not(HasSubstr("pathwise_controller_diag_reconnects_total{"
                                  "controller=\"nvme1\"}")));
  std::string lint;
  EXPECT_TRUE(PromtoolClean(text, &lint)) << lint;

  const nlohmann::json j = exporters::TopologyToJson(t);
  const nlohmann::json& sub = j["subsystems"][0];
  const nlohmann::json& head = sub["heads"][0];
  EXPECT_EQ(head["diag"],
            (nlohmann::json{{"io_requeued_no_usable_path", 17},
                            {"io_failed_no_available_path", 19}}));
  for (const nlohmann::json& p : head["paths"]) {
    if (p["name"] == "nvme0c0n1") {
      EXPECT_EQ(p["diag"], (nlohmann::json{{"failovers", 3},
                                           {"command_retries", 5},
                                           {"command_errors", 7}}));
    }
  }
  for (const nlohmann::json& c : sub["controllers"]) {
    if (c["name"] == "nvme1") {
      EXPECT_EQ(c["diag"], (nlohmann::json{{"command_errors", 0},
                                           {"resets", 9223372036854775807u}}));
    }
  }
}

// libnvme spells the path's retry counter command_retry_count; a kernel
// that does so is read too.
TEST_F(DiagCountersTest, RetryCounterUnderLibnvmeSpelling) {
  const std::string root = CopyOf("tcp2-6.12");
  Put(root, "block/nvme0c0n1", "command_retry_count", "42");
  model::Topology t;
  ASSERT_TRUE(Scan(root, t).ok());
  EXPECT_EQ(t.FindPath("nvme0c0n1")->diag.command_retries, 42u);
  EXPECT_EQ(t.FindPath("nvme0c0n1")->diag.failovers, std::nullopt);
  EXPECT_EQ(t.FindPath("nvme0c1n1")->diag, model::PathDiag{});
}

// A counter that is not a number, or out of the range the model holds, is
// the collector's error and is left out; everything else is still read.
TEST_F(DiagCountersTest, BadCountersAreErrorsAndLeftOut) {
  const std::string root = WithDiag();
  Put(root, "block/nvme0c0n1", "multipath_failover_count", "many");
  Put(root, "class/nvme/nvme0", "reset_count", "-1");
  Put(root, "class/nvme/nvme1", "reset_count", "9223372036854775808");
  model::Topology t;
  const absl::Status st = Scan(root, t);
  EXPECT_FALSE(st.ok());
  // The first in scan order is named, the others counted.
  EXPECT_THAT(std::string(st.message()), HasSubstr("/diag/"));
  EXPECT_THAT(std::string(st.message()), HasSubstr("(and 2 more)"));
  EXPECT_EQ(t.FindPath("nvme0c0n1")->diag.failovers, std::nullopt);
  EXPECT_EQ(t.FindPath("nvme0c0n1")->diag.command_retries, 5u);
  EXPECT_EQ(t.FindController("nvme0")->diag.resets, std::nullopt);
  EXPECT_EQ(t.FindController("nvme0")->diag.reconnects, 31u);
  EXPECT_EQ(t.FindController("nvme1")->diag.resets, std::nullopt);
  EXPECT_THAT(t.paths, SizeIs(2));
  const std::string text = Exposition(t);
  EXPECT_THAT(text, Not(HasSubstr("pathwise_controller_diag_resets_total")));
  EXPECT_THAT(text, HasSubstr("pathwise_path_diag_failovers_total{"));  // p1
}

// The builder alone: the out-of-range rule, with the attribute named.
TEST(DiagCountersBuilder, OutOfRangeNamesTheAttribute) {
  collectors::RawTopology raw;
  raw.subsystems.push_back({.name = "nvme-subsys0"});
  collectors::RawController c;
  c.name = "nvme0";
  c.subsystem = "nvme-subsys0";
  c.transport = "tcp";
  c.address = "traddr=10.0.0.1";
  c.state = "live";
  c.queue_count = "2";
  c.diag.resets = collectors::RawAttr(std::string("-3"));
  c.diag.reconnects = collectors::RawAttr(absl::UnavailableError(
      "class/nvme/nvme0/diag/reconnect_count: Input/output error"));
  raw.controllers.push_back(c);
  const collectors::BuiltTopology b = collectors::BuildTopology(raw);
  EXPECT_TRUE(absl::IsOutOfRange(b.status)) << b.status;
  EXPECT_THAT(std::string(b.status.message()),
              HasSubstr("class/nvme/nvme0/diag/reset_count: out of range"));
  EXPECT_THAT(std::string(b.status.message()), HasSubstr("(and 1 more)"));
  ASSERT_THAT(b.topology.controllers, SizeIs(1));
  EXPECT_EQ(b.topology.controllers[0].diag, model::ControllerDiag{});
}

}  // namespace
}  // namespace pathwise

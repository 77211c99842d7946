// SPDX-License-Identifier: Apache-2.0
// The NVMe collectors against sysfs trees captured from the testbed's guests
// (tests/fixtures/sysfs/<name>, see tests/fixtures/README.md).
//
// Each test process enters a private mount namespace and binds the fixture
// over /sys, as the agent does with --path.sysfs (collectors/
// sysfs_namespace.h): readers of /sys itself and the SysfsReader then read
// the same captured tree. This needs root (CAP_SYS_ADMIN); without it the
// tests fail, they do not skip.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/agent.h"
#include "agent/pipeline.h"
#include "collectors/nvme_iostats_collector.h"
#include "collectors/nvme_topology_collector.h"
#include "collectors/sysfs_namespace.h"
#include "exporters/labels.h"
#include "exporters/prometheus_families.h"
#include "exporters/topology_text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scoring/stage.h"
#include "tests/unit/collectors/sys_fixture.h"
#include "tests/unit/golden.h"
#include "tests/unit/log_capture.h"

namespace pathwise {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::SizeIs;

const exporters::BuildInfo kBuild{"0.0.0-test", "golden"};

using testing::FixtureDir;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::string s((std::istreambuf_iterator<char>(in)), {});
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

class SysfsFixtureTest : public testing::SysFixtureTest {
 protected:
  // Presents `root` at /sys and returns a pipeline whose
  // SysfsReader reads `root`, as the agent does with --path.sysfs.
  std::unique_ptr<agent::Pipeline> Use(const std::string& root) {
    BindOverSys(root);
    auto pipeline = std::make_unique<agent::Pipeline>();
    pipeline->SetTopologySource(
        std::make_unique<collectors::NvmeTopologyCollector>(
            collectors::SysfsReader(root)));
    pipeline->AddIoSource(std::make_unique<collectors::NvmeIoStatsCollector>(
        collectors::SysfsReader(root)));
    pipeline->SetScoring(
        std::make_unique<scoring::ScoringStage>(scoring::ScoringOptions{}));
    return pipeline;
  }

  model::Snapshot Collect(agent::Pipeline& pipeline) {
    model::Snapshot s = pipeline.Collect();
    for (auto& c : s.collectors) c.duration_seconds = 0;  // deterministic
    return s;
  }

  // Path of a path's/controller's attribute inside a fixture copy.
  static std::string Attr(const std::string& root, const std::string& rel) {
    return root + "/" + rel;
  }
};

const model::CollectorResult& Result(const model::Snapshot& s,
                                     const std::string& name) {
  for (const auto& r : s.collectors) {
    if (r.name == name) return r;
  }
  ADD_FAILURE() << "no collector " << name;
  static const model::CollectorResult none;
  return none;
}

struct FixtureCase {
  std::string name;
  std::string transport;
};
void PrintTo(const FixtureCase& c, std::ostream* os) { *os << c.name; }

class CapturedFixtureTest : public SysfsFixtureTest,
                            public ::testing::WithParamInterface<FixtureCase> {
};

TEST_P(CapturedFixtureTest, TopologyIsOneSubsystemOneHeadTwoPaths) {
  const FixtureCase& fc = GetParam();
  const std::string root = FixtureDir(fc.name);
  ASSERT_TRUE(fs::is_directory(root + "/class/nvme"))
      << "fixture " << root << " is missing (see tests/fixtures/README.md)";
  auto reg = Use(root);
  model::Snapshot s = Collect(*reg);
  const model::Topology& t = s.topology;

  EXPECT_TRUE(Result(s, "nvme_topology").success)
      << Result(s, "nvme_topology").error;
  EXPECT_TRUE(Result(s, "nvme_iostats").success)
      << Result(s, "nvme_iostats").error;

  ASSERT_THAT(t.subsystems, SizeIs(1));
  ASSERT_THAT(t.heads, SizeIs(1));
  ASSERT_THAT(t.paths, SizeIs(2));
  ASSERT_THAT(t.controllers, SizeIs(2));

  // What the scan reported is what the fixture holds.
  const model::Subsystem& sub = t.subsystems[0];
  const std::string sdir = root + "/class/nvme-subsystem/" + sub.name;
  EXPECT_EQ(sub.nqn, ReadFile(sdir + "/subsysnqn"));
  EXPECT_EQ(exporters::IopolicyText(sub), ReadFile(sdir + "/iopolicy"));
  EXPECT_NE(sub.iopolicy, model::Iopolicy::kUnknown);
  EXPECT_EQ(sub.model, ReadFile(sdir + "/model"));
  EXPECT_EQ(sub.serial, ReadFile(sdir + "/serial"));

  const model::Head& head = t.heads[0];
  EXPECT_EQ(head.subsystem, sub.name);
  EXPECT_GE(head.nsid, 1u);
  ASSERT_TRUE(head.dev.has_value());
  EXPECT_EQ(model::ToString(*head.dev),
            ReadFile(root + "/block/" + head.name + "/dev"));

  for (const model::Controller& c : t.controllers) {
    const std::string cdir = root + "/class/nvme/" + c.name;
    EXPECT_EQ(c.subsystem, sub.name);
    EXPECT_EQ(c.transport, fc.transport);
    EXPECT_EQ(c.state, model::ControllerState::kLive);
    EXPECT_EQ(c.address, ReadFile(cdir + "/address"));
    EXPECT_EQ(c.cntlid, ReadFile(cdir + "/cntlid"));
    ASSERT_TRUE(c.io_queues.has_value());
    EXPECT_EQ(*c.io_queues + 1, std::stoul(ReadFile(cdir + "/queue_count")));
  }
  EXPECT_NE(t.controllers[0].name, t.controllers[1].name);

  for (const model::Path& p : t.paths) {
    EXPECT_EQ(p.subsystem, sub.name);
    EXPECT_EQ(p.head, head.name);
    EXPECT_NE(t.FindController(p.controller), nullptr) << p.controller;
    // The path sits under its controller in sysfs.
    EXPECT_TRUE(
        fs::exists(root + "/class/nvme/" + p.controller + "/" + p.name));
    // Hidden disks have no dev_t in sysfs on these kernels (>= 5.15).
    EXPECT_FALSE(fs::exists(root + "/block/" + p.name + "/dev"));
    EXPECT_FALSE(p.dev.has_value());
    const std::string ana = root + "/block/" + p.name + "/ana_state";
    if (fs::exists(ana)) {
      EXPECT_EQ(exporters::AnaStateText(p), ReadFile(ana));
      EXPECT_NE(p.ana_state, model::AnaState::kUnknown);
    } else {
      // A controller without ANA (QEMU PCIe): the path is reported
      // optimized, which is how the kernel treats it.
      EXPECT_EQ(p.ana_state, model::AnaState::kOptimized);
    }
    ASSERT_TRUE(s.path_io.contains(p.name));
    EXPECT_TRUE(s.path_io.at(p.name).op(model::Op::kRead).has_value());
  }
  EXPECT_NE(t.paths[0].controller, t.paths[1].controller);
  ASSERT_TRUE(s.head_io.contains(head.name));
  EXPECT_EQ(s.io_source, model::IoSource::kSysfs);
}

TEST_P(CapturedFixtureTest, ExpositionMatchesGolden) {
  const std::string root = FixtureDir(GetParam().name);
  ASSERT_TRUE(fs::is_directory(root + "/class/nvme")) << root << " missing";
  auto reg = Use(root);
  model::Snapshot s = Collect(*reg);
  testing::ExpectMatchesGolden(
      exporters::SerializeText(exporters::BuildFamilies(&s, kBuild)),
      GetParam().name + ".prom");
  testing::ExpectMatchesGolden(
      exporters::SerializeText(exporters::BuildFamilies(
          &s, kBuild,
          {.histogram_buckets = exporters::HistogramBuckets::kSparse,
           .profile = exporters::MetricsProfile::kDefault})),
      GetParam().name + ".default.prom");
  testing::ExpectMatchesGolden(
      exporters::TopologyToText(s.topology, s.scoring ? &*s.scoring : nullptr),
      GetParam().name + ".topology.txt");
}

INSTANTIATE_TEST_SUITE_P(Captured, CapturedFixtureTest,
                         ::testing::Values(FixtureCase{"tcp2-6.12", "tcp"},
                                           FixtureCase{"pcie2-6.1", "pcie"}),
                         [](const ::testing::TestParamInfo<FixtureCase>& info) {
                           std::string n = info.param.name;
                           for (char& ch : n) {
                             if (!std::isalnum(static_cast<unsigned char>(ch)))
                               ch = '_';
                           }
                           return n;
                         });

// --- Hotplug: a controller that goes away (as `nvme disconnect` removes its
// sysfs entries) and comes back, rescanned by the agent.
TEST_F(SysfsFixtureTest, VanishedControllerAndPathLeaveAndReturn) {
  const std::string root = CopyOf("tcp2-6.12");
  auto reg = Use(root);
  model::SnapshotStore store;
  agent::Agent agent(*reg, store, absl::Seconds(1));
  auto before = agent.CollectOnce();
  ASSERT_THAT(before->topology.paths, SizeIs(2));
  const model::Path gone = before->topology.paths[1];
  const std::string sub = gone.subsystem;

  // The kernel removes the controller's class link, its subsystem link and
  // the path's block link (the device directory goes with them).
  const std::vector<std::string> links = {
      "class/nvme/" + gone.controller,
      "class/nvme-subsystem/" + sub + "/" + gone.controller,
      "block/" + gone.name};
  std::vector<std::pair<std::string, fs::path>> saved;
  for (const std::string& l : links) {
    const std::string abs =
        l.rfind("class/nvme-subsystem/", 0) == 0
            ? (fs::canonical(root + "/class/nvme-subsystem/" + sub) /
               gone.controller)
                  .string()
            : root + "/" + l;
    ASSERT_TRUE(fs::is_symlink(abs)) << abs;
    saved.emplace_back(abs, fs::read_symlink(abs));
    fs::remove(abs);
  }

  auto during = agent.CollectOnce();
  EXPECT_TRUE(during->AllCollectorsSucceeded())
      << during->collectors[0].error << " / " << during->collectors[1].error;
  EXPECT_THAT(during->topology.paths, SizeIs(1));
  EXPECT_THAT(during->topology.controllers, SizeIs(1));
  EXPECT_EQ(during->topology.FindPath(gone.name), nullptr);
  EXPECT_EQ(during->topology.FindController(gone.controller), nullptr);
  EXPECT_EQ(during->topology_changes_total, 1u);
  const std::string text =
      exporters::SerializeText(exporters::BuildFamilies(during.get(), kBuild));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("path=\"" + gone.name + "\"")));
  EXPECT_THAT(text, ::testing::Not(
                        HasSubstr("controller=\"" + gone.controller + "\"")));

  for (const auto& [abs, target] : saved) fs::create_symlink(target, abs);
  auto after = agent.CollectOnce();
  EXPECT_THAT(after->topology.paths, SizeIs(2));
  EXPECT_NE(after->topology.FindPath(gone.name), nullptr);
  EXPECT_EQ(after->topology_changes_total, 2u);
}

// --- Hotplug racing the scan: the controller's directory goes away and comes
// back while collections run, as a disconnect or a reset can at any point
// of a scan. Whatever a scan meets, the process lives and the topology is
// consistent: the controller whole (with its path) or absent. (libnvme
// 1.3's scan freed an uninitialised pointer when the directory vanished
// between its opendir and its scandir, and the process aborted.)
TEST_F(SysfsFixtureTest, ControllerVanishingDuringScansIsWholeOrAbsent) {
  const std::string root = CopyOf("tcp2-6.12");
  auto reg = Use(root);
  collectors::NvmeTopologyCollector collector{collectors::SysfsReader(root)};
  model::Topology before;
  ASSERT_TRUE(collector.Read(before).ok());
  ASSERT_THAT(before.paths, SizeIs(2));
  const model::Path gone = before.paths[1];
  const fs::path dir = fs::canonical(root + "/class/nvme/" + gone.controller);
  const fs::path away = dir.parent_path() / ".away";

  std::atomic<bool> stop{false};
  std::atomic<int> flips{0};
  std::thread flipper([&] {
    std::error_code ec;
    while (!stop.load()) {
      fs::rename(dir, away, ec);
      fs::rename(away, dir, ec);
      flips.fetch_add(1);
    }
  });
  int with = 0, without = 0;
  for (int i = 0; i < 4000; ++i) {
    model::Topology t;
    (void)collector.Read(t);  // an attribute read mid-flip may be missing
    const bool has_ctrl = t.FindController(gone.controller) != nullptr;
    const bool has_path = t.FindPath(gone.name) != nullptr;
    if (has_path) {
      EXPECT_TRUE(has_ctrl) << "scan " << i;
    }
    for (const model::Path& p : t.paths) {
      EXPECT_NE(t.FindController(p.controller), nullptr)
          << "scan " << i << ": path " << p.name;
    }
    (has_ctrl ? with : without)++;
  }
  stop = true;
  flipper.join();
  // The race was run: the directory flipped during the scans, and scans
  // met it both there and gone.
  EXPECT_GT(flips.load(), 100);
  EXPECT_GT(with, 0);
  EXPECT_GT(without, 0);
  model::Topology after;
  ASSERT_TRUE(collector.Read(after).ok());
  EXPECT_THAT(after.paths, SizeIs(2));
}

// --- Bad input: one broken attribute fails its collector, logs one line, and
// everything else is still collected.

class BadInputTest : public SysfsFixtureTest {
 protected:
  // Collects twice (a persistent fault is logged once) and returns the last.
  model::Snapshot CollectTwice(const std::string& root,
                               std::vector<std::string>* log_lines) {
    testing::LogCapture logs;
    auto reg = Use(root);
    Collect(*reg);
    model::Snapshot s = Collect(*reg);
    *log_lines = logs.Lines();
    return s;
  }
};

TEST_F(BadInputTest, MalformedCntlidFailsTopologyCollectorOnly) {
  const std::string root = CopyOf("tcp2-6.12");
  auto reg0 = Use(root);
  const model::Snapshot good = Collect(*reg0);
  ASSERT_THAT(good.topology.controllers, SizeIs(2));
  const std::string victim = good.topology.controllers[1].name;
  std::ofstream(Attr(root, "class/nvme/" + victim + "/cntlid")) << "0xzz\n";

  std::vector<std::string> lines;
  model::Snapshot s = CollectTwice(root, &lines);
  EXPECT_FALSE(Result(s, "nvme_topology").success);
  EXPECT_THAT(Result(s, "nvme_topology").error,
              HasSubstr("class/nvme/" + victim + "/cntlid"));
  EXPECT_TRUE(Result(s, "nvme_iostats").success);
  EXPECT_THAT(s.topology.paths, SizeIs(2));
  EXPECT_THAT(s.topology.controllers, SizeIs(2));
  EXPECT_EQ(s.topology.FindController(victim)->cntlid, "");
  EXPECT_THAT(lines, SizeIs(1));
  EXPECT_THAT(lines.at(0), HasSubstr("collector nvme_topology failed"));

  const std::string text =
      exporters::SerializeText(exporters::BuildFamilies(&s, kBuild));
  EXPECT_THAT(
      text,
      HasSubstr("pathwise_collector_success{collector=\"nvme_topology\"} 0"));
  EXPECT_THAT(
      text,
      HasSubstr("pathwise_collector_success{collector=\"nvme_iostats\"} 1"));
  EXPECT_THAT(text, HasSubstr("pathwise_controller_state{controller=\"" +
                              victim + "\",state=\"live\"} 1"));
}

TEST_F(BadInputTest, MissingPathStatFailsIoStatsCollectorOnly) {
  const std::string root = CopyOf("tcp2-6.12");
  auto reg0 = Use(root);
  const model::Snapshot good = Collect(*reg0);
  ASSERT_THAT(good.topology.paths, SizeIs(2));
  const std::string victim = good.topology.paths[0].name;
  const std::string other = good.topology.paths[1].name;
  fs::remove(fs::canonical(Attr(root, "block/" + victim + "/stat")));

  std::vector<std::string> lines;
  model::Snapshot s = CollectTwice(root, &lines);
  EXPECT_TRUE(Result(s, "nvme_topology").success)
      << Result(s, "nvme_topology").error;
  EXPECT_FALSE(Result(s, "nvme_iostats").success);
  EXPECT_THAT(Result(s, "nvme_iostats").error,
              HasSubstr("block/" + victim + "/stat"));
  EXPECT_FALSE(s.path_io.contains(victim));
  EXPECT_TRUE(s.path_io.contains(other));
  EXPECT_FALSE(s.head_io.empty());
  EXPECT_THAT(lines, SizeIs(1));
  EXPECT_THAT(lines.at(0), HasSubstr("collector nvme_iostats failed"));
}

TEST_F(BadInputTest, MalformedStatAndUnknownAnaState) {
  const std::string root = CopyOf("tcp2-6.12");
  auto reg0 = Use(root);
  const model::Snapshot good = Collect(*reg0);
  ASSERT_THAT(good.topology.paths, SizeIs(2));
  const std::string p0 = good.topology.paths[0].name;
  const std::string p1 = good.topology.paths[1].name;
  std::ofstream(Attr(root, "block/" + p0 + "/stat")) << "1 2 three\n";
  std::ofstream(Attr(root, "block/" + p1 + "/ana_state")) << "sideways\n";

  std::vector<std::string> lines;
  model::Snapshot s = CollectTwice(root, &lines);
  EXPECT_FALSE(Result(s, "nvme_iostats").success);
  EXPECT_THAT(Result(s, "nvme_iostats").error,
              HasSubstr("block/" + p0 + "/stat"));
  EXPECT_FALSE(Result(s, "nvme_topology").success);
  EXPECT_THAT(Result(s, "nvme_topology").error, HasSubstr("ana_state"));
  EXPECT_THAT(lines, SizeIs(2));  // one per failing collector
  // The path is still there, with the kernel's string; its ANA StateSet is
  // all 0.
  EXPECT_EQ(s.topology.FindPath(p1)->ana_state, model::AnaState::kUnknown);
  EXPECT_EQ(s.topology.FindPath(p1)->unknown_ana_state, "sideways");
  const std::string text =
      exporters::SerializeText(exporters::BuildFamilies(&s, kBuild));
  EXPECT_THAT(text, HasSubstr("path=\"" + p1 + "\""));
  EXPECT_THAT(text,
              ::testing::Not(HasSubstr("path=\"" + p1 + "\",controller=\"" +
                                       s.topology.FindPath(p1)->controller +
                                       "\",state=\"optimized\"} 1")));
}

TEST_F(BadInputTest, MissingIopolicyKeepsTheSubsystem) {
  const std::string root = CopyOf("tcp2-6.12");
  auto reg0 = Use(root);
  const model::Snapshot good = Collect(*reg0);
  ASSERT_THAT(good.topology.subsystems, SizeIs(1));
  const std::string sub = good.topology.subsystems[0].name;
  fs::remove(
      fs::canonical(Attr(root, "class/nvme-subsystem/" + sub + "/iopolicy")));

  std::vector<std::string> lines;
  model::Snapshot s = CollectTwice(root, &lines);
  EXPECT_FALSE(Result(s, "nvme_topology").success);
  EXPECT_THAT(Result(s, "nvme_topology").error, HasSubstr("iopolicy"));
  ASSERT_THAT(s.topology.subsystems, SizeIs(1));
  EXPECT_EQ(s.topology.subsystems[0].iopolicy, model::Iopolicy::kUnknown);
  EXPECT_EQ(s.topology.subsystems[0].unknown_iopolicy, "");
  EXPECT_THAT(s.topology.paths, SizeIs(2));
  EXPECT_THAT(lines, SizeIs(1));
}

TEST_F(BadInputTest, NoNvmeAtAllGivesOnlyBuildAndSelfMetrics) {
  char tmpl[] = "/tmp/pathwise-empty-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  tmp_ = tmpl;
  std::vector<std::string> lines;
  model::Snapshot s = CollectTwice(tmp_, &lines);
  EXPECT_TRUE(s.topology.empty());
  EXPECT_FALSE(s.topology.subsystem_class);
  EXPECT_THAT(model::Presence(s.topology).notice,
              HasSubstr("(no /sys/class/nvme-subsystem"));
  EXPECT_TRUE(Result(s, "nvme_topology").success)
      << Result(s, "nvme_topology").error;
  EXPECT_TRUE(Result(s, "nvme_iostats").success);
  EXPECT_THAT(lines, SizeIs(0));
  testing::ExpectMatchesGolden(
      exporters::SerializeText(exporters::BuildFamilies(&s, kBuild)),
      "empty.prom");
}

// nvme_core loaded, no NVMe device: the class exists and is empty.
TEST_F(BadInputTest, AnEmptySubsystemClassIsSaidApart) {
  char tmpl[] = "/tmp/pathwise-empty-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  tmp_ = tmpl;
  fs::create_directories(fs::path(tmp_) / "class/nvme-subsystem");
  std::vector<std::string> lines;
  model::Snapshot s = CollectTwice(tmp_, &lines);
  EXPECT_TRUE(s.topology.empty());
  EXPECT_TRUE(s.topology.subsystem_class);
  EXPECT_THAT(model::Presence(s.topology).notice,
              HasSubstr("(/sys/class/nvme-subsystem is empty"));
  EXPECT_TRUE(Result(s, "nvme_topology").success)
      << Result(s, "nvme_topology").error;
}

}  // namespace
}  // namespace pathwise

// SPDX-License-Identifier: Apache-2.0
// The iopolicy actuator end to end without root: the sysfs file in a
// temporary tree (written, read back, restored; an unwritable one), a fake
// kernel that refuses queue-depth, the log line and the report.
#include "control/iopolicy_actuator.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "control/iopolicy_file.h"
#include "tests/unit/log_capture.h"

namespace pathwise::control {
namespace {

namespace fs = std::filesystem;
using model::DecisionResult;
using model::Iopolicy;

const absl::Time kT0 = absl::FromUnixSeconds(1'800'000'000);

// A sysfs tree with one subsystem whose iopolicy file holds `policy`.
class SysfsTree {
 public:
  explicit SysfsTree(const std::string& policy) {
    char tmpl[] = "/tmp/pathwise-actuator-XXXXXX";
    root_ = mkdtemp(tmpl);
    dir_ = root_ + "/class/nvme-subsystem/nvme-subsys0";
    fs::create_directories(dir_);
    Set(policy);
  }
  ~SysfsTree() { fs::remove_all(root_); }
  const std::string& root() const { return root_; }
  std::string file() const { return dir_ + "/iopolicy"; }
  void Set(const std::string& policy) const {
    std::ofstream(file()) << policy << "\n";
  }
  std::string Get() const {
    std::ifstream in(file());
    std::string s;
    std::getline(in, s);
    return s;
  }

 private:
  std::string root_, dir_;
};

// A kernel without queue-depth: writing it is EINVAL, as iopolicy_store().
class NoQueueDepth : public IopolicyFile {
 public:
  explicit NoQueueDepth(std::string policy) : policy_(std::move(policy)) {}
  absl::StatusOr<std::string> Read(absl::string_view) override {
    return policy_;
  }
  absl::Status Write(absl::string_view, absl::string_view p) override {
    ++writes[std::string(p)];
    if (p == "queue-depth") return absl::InvalidArgumentError("EINVAL");
    policy_ = std::string(p);
    return absl::OkStatus();
  }
  std::map<std::string, int> writes;

 private:
  std::string policy_;
};

// A snapshot at kT0 + `t` s: nvme-subsys0 with `current`, advised `advice`.
model::Snapshot Snap(double t, Iopolicy current, Iopolicy advice) {
  model::Snapshot s;
  s.collected_at = kT0 + absl::Seconds(t);
  model::Subsystem sub;
  sub.name = "nvme-subsys0";
  sub.nqn = "nqn.2026-11.io.pathwise:testbed";
  sub.iopolicy = current;
  s.topology.subsystems.push_back(sub);
  s.scoring.emplace();
  s.scoring->iopolicy_recommended["nvme-subsys0"] = {
      advice, "asymmetric paths: path nvme0c0n1 is degraded"};
  return s;
}

std::unique_ptr<IopolicyActuator> Make(model::ActuateMode mode,
                                       std::unique_ptr<IopolicyFile> file,
                                       bool restore = true) {
  IopolicyActuatorConfig c;
  c.mode = mode;
  c.hold = absl::Seconds(3);
  c.min_interval = absl::Minutes(5);
  c.restore = restore;
  absl::StatusOr<std::unique_ptr<IopolicyActuator>> a =
      IopolicyActuator::Create(c, std::move(file));
  EXPECT_TRUE(a.ok()) << a.status();
  return a.ok() ? *std::move(a) : nullptr;
}

uint64_t Count(const model::ActuatorReport& r, Iopolicy from, Iopolicy to,
               DecisionResult result) {
  auto it = r.decisions_total.find({"nvme-subsys0", from, to, result});
  return it == r.decisions_total.end() ? 0 : it->second;
}

// Runs windows 0..n-1 s with the kernel's policy read from `tree`.
void Windows(IopolicyActuator& a, const SysfsTree& tree, int from, int to,
             Iopolicy advice) {
  for (int t = from; t < to; ++t) {
    const std::string now = tree.Get();
    const Iopolicy cur = now == "numa"          ? Iopolicy::kNuma
                         : now == "round-robin" ? Iopolicy::kRoundRobin
                         : now == "queue-depth" ? Iopolicy::kQueueDepth
                                                : Iopolicy::kUnknown;
    ASSERT_TRUE(a.Act(Snap(t, cur, advice)).ok());
  }
}

TEST(IopolicyActuatorTest, OnWritesAfterTheHoldAndRestoresOnStop) {
  SysfsTree tree("numa");
  testing::LogCapture log;
  auto a = Make(model::ActuateMode::kOn,
                std::make_unique<SysfsIopolicyFile>(tree.root()));
  Windows(*a, tree, 0, 3, Iopolicy::kQueueDepth);
  EXPECT_EQ(tree.Get(), "numa");  // still holding
  Windows(*a, tree, 3, 10, Iopolicy::kQueueDepth);
  EXPECT_EQ(tree.Get(), "queue-depth");
  model::ActuatorReport r = a->Report();
  EXPECT_EQ(r.mode, model::ActuateMode::kOn);
  EXPECT_EQ(Count(r, Iopolicy::kNuma, Iopolicy::kQueueDepth,
                  DecisionResult::kApplied),
            1u);
  EXPECT_EQ(r.decisions_total.size(), 1u);
  const model::IopolicyDecision& last = r.last_decision.at("nvme-subsys0");
  EXPECT_EQ(last.result, DecisionResult::kApplied);
  EXPECT_EQ(last.at, kT0 + absl::Seconds(3));
  ASSERT_EQ(log.Lines().size(), 1u);
  EXPECT_EQ(log.Lines()[0],
            "info iopolicy decision: subsystem=nvme-subsys0 from=numa "
            "to=queue-depth result=applied reason=\"advised queue-depth for "
            "3.0s (hold 3s): asymmetric paths: path nvme0c0n1 is degraded\"");

  a->Stop(kT0 + absl::Seconds(20));
  EXPECT_EQ(tree.Get(), "numa");
  r = a->Report();
  EXPECT_EQ(Count(r, Iopolicy::kQueueDepth, Iopolicy::kNuma,
                  DecisionResult::kApplied),
            1u);
  EXPECT_TRUE(r.last_decision.at("nvme-subsys0").restore);
  ASSERT_EQ(log.Lines().size(), 2u);
  EXPECT_TRUE(absl::StrContains(log.Lines()[1],
                                "from=queue-depth to=numa "
                                "result=applied reason=\"restore"))
      << log.Lines()[1];
  // Stopped: no more decisions.
  Windows(*a, tree, 20, 30, Iopolicy::kQueueDepth);
  EXPECT_EQ(tree.Get(), "numa");
}

TEST(IopolicyActuatorTest, DryRunDecidesLogsAndWritesNothing) {
  SysfsTree tree("numa");
  testing::LogCapture log;
  auto a = Make(model::ActuateMode::kDryRun,
                std::make_unique<SysfsIopolicyFile>(tree.root()));
  Windows(*a, tree, 0, 30, Iopolicy::kQueueDepth);
  EXPECT_EQ(tree.Get(), "numa");
  const model::ActuatorReport r = a->Report();
  EXPECT_EQ(r.mode, model::ActuateMode::kDryRun);
  EXPECT_EQ(
      Count(r, Iopolicy::kNuma, Iopolicy::kQueueDepth, DecisionResult::kDryRun),
      1u);
  ASSERT_EQ(log.Lines().size(), 1u);
  EXPECT_TRUE(absl::StrContains(log.Lines()[0], "result=dry_run"));
  a->Stop(kT0 + absl::Seconds(40));
  EXPECT_EQ(tree.Get(), "numa");
  EXPECT_EQ(a->Report().decisions_total.size(), 1u);  // nothing to restore
}

TEST(IopolicyActuatorTest, RestoreFalseLeavesThePolicy) {
  SysfsTree tree("numa");
  auto a = Make(model::ActuateMode::kOn,
                std::make_unique<SysfsIopolicyFile>(tree.root()),
                /*restore=*/false);
  Windows(*a, tree, 0, 5, Iopolicy::kRoundRobin);
  EXPECT_EQ(tree.Get(), "round-robin");
  a->Stop(kT0 + absl::Seconds(10));
  EXPECT_EQ(tree.Get(), "round-robin");
  EXPECT_EQ(a->Report().decisions_total.size(), 1u);
}

TEST(IopolicyActuatorTest, NoRestoreOverSomeoneElsesChange) {
  SysfsTree tree("numa");
  testing::LogCapture log;
  auto a = Make(model::ActuateMode::kOn,
                std::make_unique<SysfsIopolicyFile>(tree.root()));
  Windows(*a, tree, 0, 5, Iopolicy::kQueueDepth);
  EXPECT_EQ(tree.Get(), "queue-depth");
  tree.Set("round-robin");  // an administrator's choice
  a->Stop(kT0 + absl::Seconds(10));
  EXPECT_EQ(tree.Get(), "round-robin");
  ASSERT_EQ(log.Lines().size(), 2u);
  EXPECT_TRUE(absl::StrContains(log.Lines()[1], "not restored to numa"))
      << log.Lines()[1];
}

TEST(IopolicyActuatorTest, ARefusedPolicyShowsOnceAndRoundRobinTakesOver) {
  auto file = std::make_unique<NoQueueDepth>("numa");
  NoQueueDepth* kernel = file.get();
  testing::LogCapture log;
  auto a = Make(model::ActuateMode::kOn, std::move(file));
  for (int t = 0; t < 60; ++t) {
    const Iopolicy cur = kernel->writes.count("round-robin") > 0
                             ? Iopolicy::kRoundRobin
                             : Iopolicy::kNuma;
    ASSERT_TRUE(a->Act(Snap(t, cur, Iopolicy::kQueueDepth)).ok());
  }
  EXPECT_EQ(kernel->writes["queue-depth"], 1);
  EXPECT_EQ(kernel->writes["round-robin"], 1);
  const model::ActuatorReport r = a->Report();
  EXPECT_EQ(Count(r, Iopolicy::kNuma, Iopolicy::kQueueDepth,
                  DecisionResult::kRefused),
            1u);
  EXPECT_EQ(Count(r, Iopolicy::kNuma, Iopolicy::kRoundRobin,
                  DecisionResult::kApplied),
            1u);
  ASSERT_EQ(log.Lines().size(), 2u);
  EXPECT_TRUE(absl::StartsWith(log.Lines()[0], "warning iopolicy decision: "))
      << log.Lines()[0];
  EXPECT_TRUE(absl::StrContains(log.Lines()[0], "result=refused"));
  EXPECT_TRUE(absl::StrContains(log.Lines()[0], "error=\"EINVAL\""));
  EXPECT_TRUE(
      absl::StrContains(log.Lines()[1], "to=round-robin result=applied"));
}

// Bad input: the iopolicy cannot be written (here a directory where the
// file should be; in the testbed a read-only sysfs). One failed decision,
// one warning, no retry loop, nothing to restore.
TEST(IopolicyActuatorTest, AnUnwritableFileIsOneFailedDecision) {
  SysfsTree tree("numa");
  fs::remove(tree.file());
  fs::create_directory(tree.file());
  testing::LogCapture log;
  auto a = Make(model::ActuateMode::kOn,
                std::make_unique<SysfsIopolicyFile>(tree.root()));
  for (int t = 0; t < 120; ++t) {
    ASSERT_TRUE(a->Act(Snap(t, Iopolicy::kNuma, Iopolicy::kQueueDepth)).ok());
  }
  const model::ActuatorReport r = a->Report();
  EXPECT_EQ(
      Count(r, Iopolicy::kNuma, Iopolicy::kQueueDepth, DecisionResult::kFailed),
      1u);
  EXPECT_EQ(r.decisions_total.size(), 1u);
  EXPECT_EQ(r.last_decision.at("nvme-subsys0").result, DecisionResult::kFailed);
  EXPECT_EQ(r.last_decision.at("nvme-subsys0").error,
            "cannot open " + tree.file() + ": Is a directory");
  ASSERT_EQ(log.Lines().size(), 1u);
  EXPECT_TRUE(absl::StartsWith(log.Lines()[0], "warning iopolicy decision: "));
  EXPECT_TRUE(absl::StrContains(log.Lines()[0], "result=failed"));
  a->Stop(kT0 + absl::Seconds(200));
  EXPECT_EQ(a->Report().decisions_total.size(), 1u);
}

TEST(IopolicyActuatorTest, AMissingFileFailsAndIsNeverCreated) {
  SysfsTree tree("numa");
  fs::remove(tree.file());
  auto a = Make(model::ActuateMode::kOn,
                std::make_unique<SysfsIopolicyFile>(tree.root()));
  for (int t = 0; t < 10; ++t) {
    ASSERT_TRUE(a->Act(Snap(t, Iopolicy::kNuma, Iopolicy::kRoundRobin)).ok());
  }
  EXPECT_FALSE(fs::exists(tree.file()));
  EXPECT_EQ(Count(a->Report(), Iopolicy::kNuma, Iopolicy::kRoundRobin,
                  DecisionResult::kFailed),
            1u);
}

// A kernel that takes the write but keeps reporting another policy: the
// read-back makes it a failed decision.
TEST(IopolicyActuatorTest, ADifferentReadBackIsAFailure) {
  class Stubborn : public IopolicyFile {
   public:
    absl::StatusOr<std::string> Read(absl::string_view) override {
      return std::string("numa");
    }
    absl::Status Write(absl::string_view, absl::string_view) override {
      return absl::OkStatus();
    }
  };
  auto a = Make(model::ActuateMode::kOn, std::make_unique<Stubborn>());
  for (int t = 0; t < 10; ++t) {
    ASSERT_TRUE(a->Act(Snap(t, Iopolicy::kNuma, Iopolicy::kRoundRobin)).ok());
  }
  const model::ActuatorReport r = a->Report();
  EXPECT_EQ(
      Count(r, Iopolicy::kNuma, Iopolicy::kRoundRobin, DecisionResult::kFailed),
      1u);
  EXPECT_EQ(r.last_decision.at("nvme-subsys0").error,
            "written, but the kernel reports \"numa\"");
}

TEST(IopolicyActuatorTest, OffReportsItsModeAndDoesNothing) {
  SysfsTree tree("numa");
  auto a = Make(model::ActuateMode::kOff,
                std::make_unique<SysfsIopolicyFile>(tree.root()));
  Windows(*a, tree, 0, 60, Iopolicy::kQueueDepth);
  a->Stop(kT0 + absl::Seconds(60));
  EXPECT_EQ(tree.Get(), "numa");
  EXPECT_EQ(a->Report().mode, model::ActuateMode::kOff);
  EXPECT_TRUE(a->Report().decisions_total.empty());
}

}  // namespace
}  // namespace pathwise::control

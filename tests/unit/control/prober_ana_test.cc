// SPDX-License-Identifier: Apache-2.0
// The prober's ANA log page reads: which controllers want one (no ANA state
// in sysfs), when the scheduler sends them (after the first successful
// probe, then every ana_every-th), what it keeps of a page or an error, and
// controllers that do not report ANA; on a fake device and a fake clock.
#include <gtest/gtest.h>

#include <cerrno>
#include <map>
#include <string>
#include <vector>

#include "control/probe_scheduler.h"
#include "control/prober.h"

namespace pathwise::control {
namespace {

using model::AnaState;

class AnaDevice : public ProbeDevice {
 public:
  int Open(absl::string_view) override { return next_handle++; }
  void Close(int) override {}
  bool Current(int, absl::string_view) override { return true; }
  int Send(int handle, uint64_t tag) override {
    probes.push_back({handle, tag});
    return 0;
  }
  int SendAnaLog(int handle, uint64_t tag) override {
    if (ana_error != 0) return -ana_error;
    ana_reads.push_back({handle, tag});
    return 0;
  }
  int ana_error = 0;
  std::vector<std::pair<int, uint64_t>> probes, ana_reads;
  int next_handle = 3;
};

nvme::AnaLog Page(uint64_t change_count, uint8_t state_field) {
  nvme::AnaLog log;
  log.change_count = change_count;
  log.groups.push_back({.id = 1,
                        .change_count = change_count,
                        .state_field = state_field,
                        .state = nvme::AnaStateOfField(state_field),
                        .nsids = {1}});
  return log;
}

class ProberAnaTest : public ::testing::Test {
 protected:
  ProberAnaTest() : sched_(Options(), dev_) {}
  static ProberOptions Options() {
    ProberOptions o;
    o.interval = absl::Seconds(1);
    o.timeout = absl::Seconds(2);
    o.ana_every = 3;
    return o;
  }
  absl::Time At(double s) { return t0_ + absl::Seconds(s); }
  // Steps at `s` and completes the probe just sent, successfully.
  void ProbeOk(double s) {
    const size_t before = dev_.probes.size();
    sched_.Step(At(s));
    ASSERT_EQ(dev_.probes.size(), before + 1) << "no probe sent at " << s;
    sched_.Complete(dev_.probes.back().second, 0, At(s + 0.01));
  }

  AnaDevice dev_;
  ProbeScheduler sched_;
  const absl::Time t0_ = absl::FromUnixSeconds(1000);
};

TEST_F(ProberAnaTest, ReadAfterTheFirstSuccessfulProbeThenEveryNth) {
  sched_.SetControllers({"nvme0"}, At(0));
  sched_.SetAnaWanted({"nvme0"});
  EXPECT_TRUE(dev_.ana_reads.empty());  // nothing before a probe answered
  ProbeOk(0);
  ASSERT_EQ(dev_.ana_reads.size(), 1u);
  EXPECT_TRUE(sched_.AnaLogs().empty());  // not completed yet
  sched_.CompleteAna(dev_.ana_reads[0].second, Page(1, 0x01), At(0.02));
  auto logs = sched_.AnaLogs();
  ASSERT_EQ(logs.size(), 1u);
  const model::ControllerAnaLog& l = logs.at("nvme0");
  EXPECT_EQ(l.change_count, 1u);
  ASSERT_EQ(l.groups.size(), 1u);
  EXPECT_EQ(l.groups[0],
            (model::ControllerAnaGroup{1, AnaState::kOptimized, {1}}));
  EXPECT_EQ(l.read_at, At(0.02));
  EXPECT_EQ(l.error, "");
  // ana_every = 3: probes 2 and 3 read nothing, probe 4 does.
  ProbeOk(1);
  ProbeOk(2);
  EXPECT_EQ(dev_.ana_reads.size(), 1u);
  ProbeOk(3);
  ASSERT_EQ(dev_.ana_reads.size(), 2u);
  sched_.CompleteAna(dev_.ana_reads[1].second, Page(2, 0x03), At(3.02));
  EXPECT_EQ(sched_.AnaLogs().at("nvme0").groups[0].state,
            AnaState::kInaccessible);
  EXPECT_EQ(sched_.AnaLogs().at("nvme0").change_count, 2u);
}

TEST_F(ProberAnaTest, OnlyWantedControllersAndOneReadAtATime) {
  sched_.SetControllers({"nvme0", "nvme1"}, At(0));
  sched_.SetAnaWanted({"nvme1"});
  sched_.Step(At(0));
  ASSERT_EQ(dev_.probes.size(), 2u);
  for (const auto& [h, tag] : dev_.probes) sched_.Complete(tag, 0, At(0.01));
  ASSERT_EQ(dev_.ana_reads.size(), 1u);
  // Three more successful probes with the read still outstanding: no
  // second read.
  for (double s : {1.0, 2.0, 3.0}) {
    const size_t before = dev_.probes.size();
    sched_.Step(At(s));
    for (size_t i = before; i < dev_.probes.size(); ++i) {
      sched_.Complete(dev_.probes[i].second, 0, At(s + 0.01));
    }
  }
  EXPECT_EQ(dev_.ana_reads.size(), 1u);
  sched_.CompleteAna(dev_.ana_reads[0].second, Page(1, 0x02), At(3.5));
  EXPECT_EQ(sched_.AnaLogs().size(), 1u);
  EXPECT_TRUE(sched_.AnaLogs().contains("nvme1"));
  // No longer wanted (sysfs has its state now): forgotten.
  sched_.SetAnaWanted({});
  EXPECT_TRUE(sched_.AnaLogs().empty());
}

TEST_F(ProberAnaTest, AFailedReadKeepsTheLastPageAndSaysWhy) {
  sched_.SetControllers({"nvme0"}, At(0));
  sched_.SetAnaWanted({"nvme0"});
  ProbeOk(0);
  sched_.CompleteAna(dev_.ana_reads[0].second, Page(5, 0x01), At(0.02));
  ProbeOk(1);
  ProbeOk(2);
  ProbeOk(3);
  ASSERT_EQ(dev_.ana_reads.size(), 2u);
  sched_.CompleteAna(dev_.ana_reads[1].second,
                     absl::PermissionDeniedError("Get Log Page: denied"),
                     At(3.02));
  const model::ControllerAnaLog l = sched_.AnaLogs().at("nvme0");
  EXPECT_EQ(l.error, "Get Log Page: denied");
  EXPECT_EQ(l.change_count, 5u);
  EXPECT_EQ(l.read_at, At(0.02));
  ASSERT_EQ(l.groups.size(), 1u);
}

TEST_F(ProberAnaTest, AControllerWithoutAnaIsAskedOnce) {
  dev_.ana_error = EOPNOTSUPP;
  sched_.SetControllers({"nvme0"}, At(0));
  sched_.SetAnaWanted({"nvme0"});
  for (int s = 0; s < 8; ++s) ProbeOk(s);
  EXPECT_TRUE(dev_.ana_reads.empty());
  EXPECT_TRUE(sched_.AnaLogs().empty());
}

TEST_F(ProberAnaTest, ASubmitErrorIsReportedAndRetriedLater) {
  dev_.ana_error = EIO;
  sched_.SetControllers({"nvme0"}, At(0));
  sched_.SetAnaWanted({"nvme0"});
  ProbeOk(0);
  auto logs = sched_.AnaLogs();
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_NE(logs.at("nvme0").error.find("submit"), std::string::npos);
  EXPECT_TRUE(logs.at("nvme0").groups.empty());
  dev_.ana_error = 0;
  ProbeOk(1);
  ProbeOk(2);
  EXPECT_TRUE(dev_.ana_reads.empty());
  ProbeOk(3);
  EXPECT_EQ(dev_.ana_reads.size(), 1u);
}

TEST_F(ProberAnaTest, ACompletionOfAnotherTagOrAControllerThatLeftIsIgnored) {
  sched_.SetControllers({"nvme0"}, At(0));
  sched_.SetAnaWanted({"nvme0"});
  ProbeOk(0);
  ASSERT_EQ(dev_.ana_reads.size(), 1u);
  sched_.CompleteAna(12345, Page(1, 0x01), At(0.1));
  EXPECT_TRUE(sched_.AnaLogs().empty());
  sched_.SetControllers({}, At(0.2));
  sched_.CompleteAna(dev_.ana_reads[0].second, Page(1, 0x01), At(0.3));
  EXPECT_TRUE(sched_.AnaLogs().empty());
}

TEST(AnaWantedTest, ControllersWithoutAPathWithSysfsAnaState) {
  model::Topology t;
  t.controllers = {{.name = "nvme0"}, {.name = "nvme1"}, {.name = "nvme2"}};
  model::Path p0{.name = "nvme0c0n1", .controller = "nvme0"};
  p0.ana_state = AnaState::kOptimized;
  model::Path p1{.name = "nvme0c1n1", .controller = "nvme1"};
  p1.ana_state = AnaState::kUnknown;  // sysfs had none
  model::Path p1b{.name = "nvme0c1n2", .controller = "nvme1"};
  p1b.unknown_ana_state = "future-state";  // reported, just not known
  t.paths = {p0, p1};
  EXPECT_EQ(AnaWanted(t), (std::vector<std::string>{"nvme1", "nvme2"}));
  t.paths.push_back(p1b);
  EXPECT_EQ(AnaWanted(t), (std::vector<std::string>{"nvme2"}));
  // Multipath off: controllers and no paths at all.
  t.paths.clear();
  EXPECT_EQ(AnaWanted(t),
            (std::vector<std::string>{"nvme0", "nvme1", "nvme2"}));
}

}  // namespace
}  // namespace pathwise::control

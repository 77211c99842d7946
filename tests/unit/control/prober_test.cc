// SPDX-License-Identifier: Apache-2.0
// The controller prober against a fake device and a fake clock (the
// scheduler), and on its thread against a fake ring that never completes
// (a hung controller must cost one command, and never hold up Read).
#include "control/prober.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "control/probe_scheduler.h"

namespace pathwise::control {
namespace {

using model::ProbeFailure;

class FakeDevice : public ProbeDevice {
 public:
  int Open(absl::string_view controller) override {
    opens.push_back(std::string(controller));
    if (auto it = open_error.find(std::string(controller));
        it != open_error.end()) {
      return -it->second;
    }
    const int h = next_handle++;
    device_of[h] = std::string(controller);
    return h;
  }
  void Close(int handle) override { closed.push_back(handle); }
  bool Current(int handle, absl::string_view controller) override {
    return !renamed.contains(std::string(controller));
  }
  int Send(int handle, uint64_t tag) override {
    if (send_error != 0) return -send_error;
    sent.push_back({handle, tag});
    return 0;
  }

  std::map<std::string, int> open_error;  // controller -> errno
  std::set<std::string> renamed;
  int send_error = 0;
  std::vector<std::string> opens;
  std::vector<int> closed;
  std::vector<std::pair<int, uint64_t>> sent;
  std::map<int, std::string> device_of;
  int next_handle = 3;
};

uint64_t Failures(const model::ControllerProbeStats& s, ProbeFailure f) {
  return s.failures[model::Index(f)];
}

class SchedulerTest : public ::testing::Test {
 protected:
  SchedulerTest() : sched_(Options(), dev_) {}
  static ProberOptions Options() {
    ProberOptions o;
    o.interval = absl::Seconds(1);
    o.timeout = absl::Seconds(2);
    return o;
  }
  absl::Time At(double s) { return t0_ + absl::Seconds(s); }
  model::ControllerProbeStats StatsOf(const std::string& c, double s) {
    return sched_.Stats(At(s)).at(c);
  }

  FakeDevice dev_;
  ProbeScheduler sched_;
  const absl::Time t0_ = absl::FromUnixSeconds(1000);
};

TEST_F(SchedulerTest, OneProbePerControllerPerIntervalTimedToCompletion) {
  sched_.SetControllers({"nvme0", "nvme1"}, At(0));
  EXPECT_EQ(sched_.Step(At(0)), At(2));  // next: the timeouts
  ASSERT_EQ(dev_.sent.size(), 2u);
  sched_.Complete(dev_.sent[0].second, 0, At(0.005));
  sched_.Complete(dev_.sent[1].second, 0, At(0.030));
  // Nothing outstanding: the next probes are due a second after the last.
  EXPECT_EQ(sched_.Step(At(0.5)), At(1));
  EXPECT_EQ(dev_.sent.size(), 2u);
  sched_.Step(At(1));
  EXPECT_EQ(dev_.sent.size(), 4u);
  // Each device opened once and kept.
  EXPECT_EQ(dev_.opens, (std::vector<std::string>{"nvme0", "nvme1"}));

  const model::ControllerProbeStats s0 = StatsOf("nvme0", 1);
  EXPECT_EQ(s0.latency.Count(), 1u);
  EXPECT_EQ(s0.latency_sum_ns, 5'000'000u);
  EXPECT_FALSE(s0.unreachable);
  EXPECT_EQ(StatsOf("nvme1", 1).latency_sum_ns, 30'000'000u);
}

TEST_F(SchedulerTest, AProbeThatNeverCompletesCostsOneCommandAndOneTimeout) {
  sched_.SetControllers({"nvme0"}, At(0));
  sched_.Step(At(0));
  ASSERT_EQ(dev_.sent.size(), 1u);
  // Before the timeout: reachable, nothing counted.
  sched_.Step(At(1.5));
  EXPECT_FALSE(StatsOf("nvme0", 1.5).unreachable);
  // Overdue: unreachable at once, even before a Step counted the timeout.
  EXPECT_TRUE(StatsOf("nvme0", 2.0).unreachable);
  EXPECT_EQ(Failures(StatsOf("nvme0", 2.0), ProbeFailure::kTimeout), 0u);
  // A minute of steps: still the one command, counted once.
  for (double t = 2; t < 60; t += 0.25) {
    EXPECT_EQ(sched_.Step(At(t)), absl::InfiniteFuture());
  }
  EXPECT_EQ(dev_.sent.size(), 1u);
  EXPECT_EQ(sched_.outstanding(), 1u);
  model::ControllerProbeStats s = StatsOf("nvme0", 60);
  EXPECT_EQ(Failures(s, ProbeFailure::kTimeout), 1u);
  EXPECT_TRUE(s.unreachable);
  EXPECT_EQ(s.latency.Count(), 0u);

  // The kernel finally completes it (late): no latency sample, no second
  // failure; reachable again, and probing resumes at once.
  sched_.Complete(dev_.sent[0].second, 0, At(60.1));
  s = StatsOf("nvme0", 60.1);
  EXPECT_EQ(s.latency.Count(), 0u);
  EXPECT_EQ(Failures(s, ProbeFailure::kTimeout), 1u);
  EXPECT_FALSE(s.unreachable);
  sched_.Step(At(60.2));
  EXPECT_EQ(dev_.sent.size(), 2u);
}

TEST_F(SchedulerTest, StatusesAndErrnosByReason) {
  sched_.SetControllers({"nvme0"}, At(0));
  auto probe_and_complete = [&](double t, int32_t res) {
    sched_.Step(At(t));
    sched_.Complete(dev_.sent.back().second, res, At(t + 0.01));
  };
  probe_and_complete(0, 0x0370);  // host pathing error
  EXPECT_TRUE(StatsOf("nvme0", 0.1).unreachable);
  probe_and_complete(1, 0x0002);  // invalid field: the target answered
  EXPECT_FALSE(StatsOf("nvme0", 1.1).unreachable);
  probe_and_complete(2, -EINTR);  // cancelled by the kernel
  EXPECT_TRUE(StatsOf("nvme0", 2.1).unreachable);
  probe_and_complete(3, 0x0106);
  probe_and_complete(4, 0x0281);
  probe_and_complete(5, 0x07ff);
  probe_and_complete(6, 0x0401);
  const model::ControllerProbeStats s = StatsOf("nvme0", 7);
  EXPECT_EQ(Failures(s, ProbeFailure::kPath), 1u);
  EXPECT_EQ(Failures(s, ProbeFailure::kGeneric), 1u);
  EXPECT_EQ(Failures(s, ProbeFailure::kTransport), 1u);
  EXPECT_EQ(Failures(s, ProbeFailure::kCommandSpecific), 1u);
  EXPECT_EQ(Failures(s, ProbeFailure::kMedia), 1u);
  EXPECT_EQ(Failures(s, ProbeFailure::kVendor), 1u);
  EXPECT_EQ(Failures(s, ProbeFailure::kReserved), 1u);
  EXPECT_EQ(Failures(s, ProbeFailure::kTimeout), 0u);
  EXPECT_EQ(s.latency.Count(), 0u);
}

TEST_F(SchedulerTest, NoPermissionIsUnavailableNotUnreachable) {
  dev_.open_error["nvme0"] = EACCES;
  dev_.open_error["nvme1"] = EAGAIN;  // the kernel: controller not live
  sched_.SetControllers({"nvme0", "nvme1"}, At(0));
  sched_.Step(At(0));
  sched_.Step(At(1));
  EXPECT_TRUE(dev_.sent.empty());
  const model::ControllerProbeStats s0 = StatsOf("nvme0", 1);
  EXPECT_EQ(Failures(s0, ProbeFailure::kUnavailable), 2u);
  EXPECT_FALSE(s0.unreachable);
  const model::ControllerProbeStats s1 = StatsOf("nvme1", 1);
  EXPECT_EQ(Failures(s1, ProbeFailure::kTransport), 2u);
  EXPECT_TRUE(s1.unreachable);
  EXPECT_EQ(FailureOfErrno(ENOENT), ProbeFailure::kUnavailable);
  EXPECT_EQ(FailureOfErrno(EPERM), ProbeFailure::kUnavailable);
  EXPECT_EQ(FailureOfErrno(EOPNOTSUPP), ProbeFailure::kUnavailable);
  EXPECT_EQ(FailureOfErrno(ENODEV), ProbeFailure::kTransport);
  EXPECT_EQ(FailureOfErrno(EIO), ProbeFailure::kTransport);
}

TEST_F(SchedulerTest, ADeviceGoneMidProbeIsReopenedByName) {
  sched_.SetControllers({"nvme0"}, At(0));
  sched_.Step(At(0));
  ASSERT_EQ(dev_.sent.size(), 1u);
  const int first = dev_.sent[0].first;
  // The controller behind the open device went away during the probe.
  sched_.Complete(dev_.sent[0].second, -ENODEV, At(0.1));
  EXPECT_EQ(dev_.closed, std::vector<int>{first});
  EXPECT_EQ(Failures(StatsOf("nvme0", 0.1), ProbeFailure::kTransport), 1u);
  // Its node is gone too for a while: unavailable, no crash, no loop.
  dev_.open_error["nvme0"] = ENOENT;
  sched_.Step(At(1));
  EXPECT_EQ(Failures(StatsOf("nvme0", 1), ProbeFailure::kUnavailable), 1u);
  // Back (a new controller of that name): opened again and probed.
  dev_.open_error.clear();
  sched_.Step(At(2));
  ASSERT_EQ(dev_.sent.size(), 2u);
  EXPECT_NE(dev_.sent[1].first, first);
  sched_.Complete(dev_.sent[1].second, 0, At(2.01));
  EXPECT_FALSE(StatsOf("nvme0", 2.1).unreachable);
  EXPECT_EQ(StatsOf("nvme0", 2.1).latency.Count(), 1u);
}

TEST_F(SchedulerTest, ARenamedNodeIsReopened) {
  sched_.SetControllers({"nvme0"}, At(0));
  sched_.Step(At(0));
  sched_.Complete(dev_.sent[0].second, 0, At(0.01));
  dev_.renamed.insert("nvme0");  // /dev/nvme0 is now another device
  sched_.Step(At(1));
  EXPECT_EQ(dev_.closed.size(), 1u);
  EXPECT_EQ(dev_.opens.size(), 2u);
  EXPECT_EQ(dev_.sent.size(), 2u);
}

TEST_F(SchedulerTest,
       AControllerThatLeftIsForgottenAndItsLateCompletionIgnored) {
  sched_.SetControllers({"nvme0"}, At(0));
  sched_.Step(At(0));
  const uint64_t old_tag = dev_.sent[0].second;
  sched_.SetControllers({}, At(0.5));
  EXPECT_EQ(dev_.closed.size(), 1u);
  EXPECT_TRUE(sched_.Stats(At(0.5)).empty());
  // A new controller of the same name: probed at once, on its own.
  sched_.SetControllers({"nvme0"}, At(1));
  sched_.Step(At(1));
  ASSERT_EQ(dev_.sent.size(), 2u);
  sched_.Complete(old_tag, -EINTR, At(1.01));  // the old one's
  model::ControllerProbeStats s = StatsOf("nvme0", 1.01);
  EXPECT_EQ(Failures(s, ProbeFailure::kTransport), 0u);
  EXPECT_FALSE(s.unreachable);
  sched_.Complete(dev_.sent[1].second, 0, At(1.02));
  EXPECT_EQ(StatsOf("nvme0", 1.1).latency.Count(), 1u);
  EXPECT_EQ(sched_.outstanding(), 0u);
}

TEST_F(SchedulerTest, ASubmissionErrorIsAFailureNotAnOutstandingProbe) {
  dev_.send_error = EAGAIN;
  sched_.SetControllers({"nvme0"}, At(0));
  EXPECT_EQ(sched_.Step(At(0)), At(1));
  EXPECT_EQ(sched_.outstanding(), 0u);
  EXPECT_EQ(Failures(StatsOf("nvme0", 0), ProbeFailure::kTransport), 1u);
}

// A ring whose probes never complete; Wait sleeps until woken or timed out.
class HungRing : public ProbeRing {
 public:
  int Open(absl::string_view) override { return 3; }
  void Close(int) override {}
  bool Current(int, absl::string_view) override { return true; }
  int Send(int, uint64_t) override {
    std::lock_guard<std::mutex> l(mu_);
    ++sends_;
    return 0;
  }
  absl::StatusOr<std::vector<Done>> Wait(absl::Duration timeout) override {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait_for(l, absl::ToChronoNanoseconds(timeout), [&] { return woken_; });
    woken_ = false;
    return std::vector<Done>{};
  }
  void Wake() override {
    std::lock_guard<std::mutex> l(mu_);
    woken_ = true;
    cv_.notify_all();
  }
  int sends() {
    std::lock_guard<std::mutex> l(mu_);
    return sends_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool woken_ = false;
  int sends_ = 0;
};

TEST(ProberTest, AHungControllerNeverHoldsUpReadAndCostsOneCommand) {
  ProberOptions o;
  o.interval = absl::Milliseconds(20);
  o.timeout = absl::Milliseconds(60);
  auto ring = std::make_unique<HungRing>();
  HungRing* r = ring.get();
  Prober prober(o, std::move(ring));
  model::Topology topo;
  topo.controllers.push_back({.name = "nvme0"});
  absl::Duration slowest;
  model::IoReading io;
  const absl::Time end = absl::Now() + absl::Milliseconds(400);
  while (absl::Now() < end) {
    const absl::Time start = absl::Now();
    ASSERT_TRUE(prober.Read(topo, io).ok());
    slowest = std::max(slowest, absl::Now() - start);
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_LT(slowest, absl::Milliseconds(20));
  EXPECT_EQ(r->sends(), 1);
  ASSERT_TRUE(io.controller_probe.contains("nvme0"));
  const model::ControllerProbeStats& s = io.controller_probe.at("nvme0");
  EXPECT_TRUE(s.unreachable);
  EXPECT_EQ(Failures(s, ProbeFailure::kTimeout), 1u);
}

// A ring whose first waits throw, as an allocation that fails would: the
// prober's thread must neither end the process (an exception escaping a
// thread calls std::terminate) nor stop probing.
class ThrowingRing : public HungRing {
 public:
  absl::StatusOr<std::vector<Done>> Wait(absl::Duration timeout) override {
    if (throws_.fetch_sub(1) > 0) throw std::runtime_error("out of buffers");
    return HungRing::Wait(timeout);
  }

 private:
  std::atomic<int> throws_{2};
};

TEST(ProberTest, AnExceptionInTheProbeThreadIsAnErrorOfTheCollector) {
  ProberOptions o;
  o.interval = absl::Milliseconds(20);
  o.timeout = absl::Milliseconds(60);
  Prober prober(o, std::make_unique<ThrowingRing>());
  model::Topology topo;
  topo.controllers.push_back({.name = "nvme0"});
  model::IoReading io;
  // The failed turns are reported (each sleeps 100 ms before the next).
  absl::Status first;
  const absl::Time end = absl::Now() + absl::Seconds(5);
  while (absl::Now() < end && first.ok()) {
    first = prober.Read(topo, io);
    absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_NE(std::string(first.message()).find("probe thread: out of buffers"),
            std::string::npos)
      << first;
  // Then the ring works again, and the error clears.
  absl::Status later = first;
  const absl::Time end2 = absl::Now() + absl::Seconds(5);
  while (absl::Now() < end2 && !later.ok()) {
    absl::SleepFor(absl::Milliseconds(20));
    later = prober.Read(topo, io);
  }
  EXPECT_TRUE(later.ok()) << later;
}

}  // namespace
}  // namespace pathwise::control

// SPDX-License-Identifier: Apache-2.0
// The ANA monitor on a fake page source: states set from the group that
// lists each path's namespace, reads at start, on request (an ANA status)
// and when due, controllers without ANA reporting, failed reads, and the
// thread answering a queue's request.
#include "datapath/ana_monitor.h"

#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace pathwise::datapath {
namespace {

using model::AnaState;

nvme::AnaLog Page(std::vector<std::pair<AnaState, std::vector<uint32_t>>> g) {
  nvme::AnaLog log;
  uint32_t id = 1;
  for (auto& [state, nsids] : g) {
    nvme::AnaGroup group;
    group.id = id++;
    group.state = state;
    group.nsids = nsids;
    log.groups.push_back(group);
  }
  return log;
}

// Pages by path, and how often each was read. Locked: the monitor's
// thread reads while a test sets pages.
class FakeSource final : public AnaSource {
 public:
  absl::StatusOr<nvme::AnaLog> Read(int path) override {
    absl::MutexLock l(&mu_);
    ++reads_[path];
    auto it = pages_.find(path);
    if (it == pages_.end()) return absl::UnavailableError("no page");
    return it->second;
  }
  void Set(int path, absl::StatusOr<nvme::AnaLog> page) {
    absl::MutexLock l(&mu_);
    pages_.insert_or_assign(path, std::move(page));
  }
  int reads(int path) {
    absl::MutexLock l(&mu_);
    return reads_[path];
  }

 private:
  absl::Mutex mu_;
  std::map<int, absl::StatusOr<nvme::AnaLog>> pages_;
  std::map<int, int> reads_;
};

class AnaMonitorTest : public ::testing::Test {
 protected:
  AnaMonitorTest() : paths_(2, RetryPolicy{.backoff_initial_ns = 10}) {}

  std::unique_ptr<AnaMonitor> Make(absl::Duration interval) {
    return std::make_unique<AnaMonitor>(
        paths_, std::vector<uint32_t>{2, 2},
        std::vector<std::string>{"nvme0n2", "nvme1n2"}, source_,
        AnaMonitorOptions{.interval = interval,
                          .change_interval = absl::Seconds(1),
                          .log =
                              [this](const std::string& l) {
                                absl::MutexLock m(&log_mu_);
                                log_.push_back(l);
                              },
                          .clock = [] { return int64_t{1000}; }});
  }
  std::vector<std::string> Log() {
    absl::MutexLock m(&log_mu_);
    return log_;
  }

  PathStates paths_;
  FakeSource source_;
  absl::Mutex log_mu_;
  std::vector<std::string> log_;
  const absl::Time t0_ = absl::FromUnixSeconds(1000);
};

TEST_F(AnaMonitorTest, SetsEachPathsStateFromItsNamespacesGroup) {
  // Namespace 2 is in group 2 on path 0's controller, group 1 on path 1's.
  source_.Set(0, Page({{AnaState::kOptimized, {1}},
                       {AnaState::kInaccessible, {2, 3}}}));
  source_.Set(1, Page({{AnaState::kNonOptimized, {2}}}));
  auto m = Make(absl::Seconds(10));
  const absl::Time next = m->ReadDue(t0_);
  EXPECT_EQ(next, t0_ + absl::Seconds(10));
  EXPECT_EQ(paths_.Get(0).ana, AnaState::kInaccessible);
  EXPECT_EQ(paths_.Get(1).ana, AnaState::kNonOptimized);
  const std::vector<policy::PathInfo> infos = paths_.Infos();
  EXPECT_FALSE(infos[0].usable);
  EXPECT_TRUE(infos[1].usable);
  EXPECT_FALSE(infos[1].optimized);
  EXPECT_EQ(Log(), (std::vector<std::string>{
                       "path nvme0n2: ANA inaccessible (group 2)",
                       "path nvme1n2: ANA non-optimized (group 1)"}));
}

TEST_F(AnaMonitorTest, ReadsWhenDueOrAskedAndLogsOnlyChanges) {
  source_.Set(0, Page({{AnaState::kOptimized, {2}}}));
  source_.Set(1, Page({{AnaState::kOptimized, {2}}}));
  auto m = Make(absl::Seconds(10));
  m->ReadDue(t0_);
  EXPECT_EQ(source_.reads(0), 1);
  // Not due yet, not asked: no read.
  m->ReadDue(t0_ + absl::Seconds(5));
  EXPECT_EQ(source_.reads(0), 1);
  // Asked (an ANA status on path 1): only path 1 is read.
  source_.Set(1, Page({{AnaState::kInaccessible, {2}}}));
  m->Request(1);
  m->ReadDue(t0_ + absl::Seconds(6));
  EXPECT_EQ(source_.reads(0), 1);
  EXPECT_EQ(source_.reads(1), 2);
  EXPECT_EQ(paths_.Get(1).ana, AnaState::kInaccessible);
  // Due: both read; nothing changed, nothing logged.
  const size_t lines = Log().size();
  m->ReadDue(t0_ + absl::Seconds(10));
  EXPECT_EQ(source_.reads(0), 2);
  EXPECT_EQ(Log().size(), lines);
  // Path 1 comes back at its next periodic read.
  source_.Set(1, Page({{AnaState::kOptimized, {2}}}));
  m->ReadDue(t0_ + absl::Seconds(16));
  EXPECT_EQ(paths_.Get(1).ana, AnaState::kOptimized);
  EXPECT_EQ(Log().back(), "path nvme1n2: ANA optimized (group 1)");
}

// An ANA status holds the path; the read it asks for releases it, usable or
// not as the page says.
TEST_F(AnaMonitorTest, TheReadAfterAnAnaStatusEndsThePendingState) {
  source_.Set(0, Page({{AnaState::kOptimized, {2}}}));
  source_.Set(1, Page({{AnaState::kOptimized, {2}}}));
  auto m = Make(absl::Seconds(10));
  m->ReadDue(t0_);
  paths_.SetAnaErrorHandler([&](int p) { m->Request(p); });
  paths_.OnAnaError(0, 1000);
  EXPECT_FALSE(paths_.Get(0).usable());
  source_.Set(0, Page({{AnaState::kChange, {2}}}));
  // A path in transition is read again within change_interval.
  EXPECT_EQ(m->ReadDue(t0_ + absl::Seconds(1)), t0_ + absl::Seconds(2));
  EXPECT_FALSE(paths_.Get(0).ana_pending);
  EXPECT_FALSE(paths_.Get(0).usable());  // change takes no I/O
  source_.Set(0, Page({{AnaState::kOptimized, {2}}}));
  m->ReadDue(t0_ + absl::Seconds(2));
  EXPECT_TRUE(paths_.Get(0).usable());
  EXPECT_FALSE(paths_.AnyFailed());
}

TEST_F(AnaMonitorTest, ControllersWithoutAnaStayOptimizedAndAreNotReadAgain) {
  source_.Set(0, absl::FailedPreconditionError("no ANA"));
  source_.Set(1, Page({{AnaState::kOptimized, {2}}}));
  auto m = Make(absl::Seconds(10));
  m->ReadDue(t0_);
  EXPECT_EQ(paths_.Get(0).ana, AnaState::kUnknown);
  EXPECT_TRUE(paths_.Infos()[0].usable);
  EXPECT_TRUE(paths_.Infos()[0].optimized);
  EXPECT_EQ(Log().at(0), "path nvme0n2: no ANA; counted as optimized");
  m->ReadDue(t0_ + absl::Seconds(30));
  EXPECT_EQ(source_.reads(0), 1);
  EXPECT_EQ(source_.reads(1), 2);
  // An ANA status from it anyway: read once more, and with nothing to say
  // the path is failed for probes to bring back.
  paths_.SetAnaErrorHandler([&](int p) { m->Request(p); });
  paths_.OnAnaError(0, 1000);
  m->ReadDue(t0_ + absl::Seconds(31));
  EXPECT_EQ(source_.reads(0), 2);
  EXPECT_FALSE(paths_.Get(0).ana_pending);
  EXPECT_TRUE(paths_.Get(0).failed);
}

TEST_F(AnaMonitorTest, AFailedReadKeepsTheLastStateUnlessAReadWasPending) {
  source_.Set(0, Page({{AnaState::kNonOptimized, {2}}}));
  source_.Set(1, Page({{AnaState::kOptimized, {7}}}));  // not namespace 2
  auto m = Make(absl::Seconds(10));
  m->ReadDue(t0_);
  EXPECT_EQ(paths_.Get(1).ana, AnaState::kUnknown);
  EXPECT_FALSE(paths_.Get(1).failed);
  source_.Set(0, absl::UnavailableError("link down"));
  m->ReadDue(t0_ + absl::Seconds(10));
  m->ReadDue(t0_ + absl::Seconds(20));
  EXPECT_EQ(paths_.Get(0).ana, AnaState::kNonOptimized);
  EXPECT_FALSE(paths_.Get(0).failed);
  const std::vector<std::string> log = Log();
  // The error once, not at every read.
  EXPECT_EQ(std::count(log.begin(), log.end(),
                       "path nvme0n2: reading the ANA log page: link down"),
            1);
  paths_.SetAnaErrorHandler([&](int p) { m->Request(p); });
  paths_.OnAnaError(0, 1000);
  m->ReadDue(t0_ + absl::Seconds(21));
  EXPECT_TRUE(paths_.Get(0).failed);
  EXPECT_FALSE(paths_.Get(0).ana_pending);
}

// The thread: Start reads every path before returning, then a request
// from another thread (a queue's ANA status) is answered without waiting
// for the interval.
TEST_F(AnaMonitorTest, TheThreadAnswersRequests) {
  source_.Set(0, Page({{AnaState::kOptimized, {2}}}));
  source_.Set(1, Page({{AnaState::kOptimized, {2}}}));
  auto m = Make(absl::Hours(1));
  m->Start();
  EXPECT_EQ(paths_.Get(0).ana, AnaState::kOptimized);
  EXPECT_EQ(source_.reads(0), 1);
  source_.Set(0, Page({{AnaState::kInaccessible, {2}}}));
  paths_.OnAnaError(0, 1000);  // the handler Start installed
  for (int i = 0; i < 500 && paths_.Get(0).ana != AnaState::kInaccessible;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(paths_.Get(0).ana, AnaState::kInaccessible);
  EXPECT_FALSE(paths_.Get(0).ana_pending);
  m->Stop();
  EXPECT_EQ(source_.reads(1), 1);  // not due within the hour
}

}  // namespace
}  // namespace pathwise::datapath

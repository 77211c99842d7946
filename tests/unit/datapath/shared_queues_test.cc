// SPDX-License-Identifier: Apache-2.0
// The NVMe backend with two ublk queues on fake queue contexts and a fake
// clock: one selector for the device, so each path's in-flight count is
// summed over the queues (queue-depth's input, pathwise's in-flight term),
// and the Command Retry Delay a status asks for holds the retry back.
#include <stdlib.h>

#include <array>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

#include "datapath/nvme_backend.h"
#include "gtest/gtest.h"
#include "nvme/io.h"
#include "nvme/status.h"
#include "tests/unit/datapath/fake_queue_context.h"

namespace pathwise::datapath {
namespace {

namespace fs = std::filesystem;
using testing_util::FakeContext;
using testing_util::Sqe;

constexpr int64_t kMs = 1'000'000;

class SharedQueuesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/pathwise-dq-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override {
    for (auto& q : queues_) q.reset();
    backend_.reset();
    fs::remove_all(dir_);
  }

  void Start(policy::Policy policy, int64_t max_retry_delay_ns = 5'000 * kMs) {
    NamespaceGroup g;
    g.id = "uuid.1";
    for (int i = 0; i < 2; ++i) {
      NamespacePath p;
      p.name = "nvme" + std::to_string(i) + "n1";
      p.generic = "ng" + std::to_string(i) + "n1";
      p.controller_instance = i;
      p.nsid = 1;
      p.size_sectors = 1 << 20;
      p.logical_block_size = 4096;
      p.physical_block_size = 4096;
      p.max_hw_sectors_kb = 256;
      std::ofstream(dir_ + "/" + p.generic) << "x";
      g.paths.push_back(p);
    }
    BackendOptions o;
    o.policy = policy;
    o.dev_dir = dir_;
    o.io_timeout = absl::Seconds(100);
    o.retry.max_retry_delay_ns = max_retry_delay_ns;
    // No probe of a failed path within these tests' spans.
    o.retry.backoff_initial_ns = 100'000 * kMs;
    o.clock = [this] { return now_; };
    auto b = NvmeBackend::Open(g, o);
    ASSERT_TRUE(b.ok()) << b.status();
    backend_ = *std::move(b);
    for (int q = 0; q < 2; ++q) {
      ASSERT_TRUE(contexts_[q].ok());
      auto attached = backend_->AttachQueue(contexts_[q]);
      ASSERT_TRUE(attached.ok()) << attached.status();
      queues_[q] = *std::move(attached);
    }
  }

  ublk::IoRequest Read(uint16_t tag) {
    ublk::IoRequest r;
    r.tag = tag;
    r.op = ublk::IoOp::kRead;
    r.offset = 8192;
    r.length = 4096;
    r.buffer = std::span<std::byte>(buffer_.data(), 4096);
    return r;
  }
  static std::vector<Sqe> Commands(const std::vector<Sqe>& sqes) {
    std::vector<Sqe> out;
    for (const Sqe& s : sqes) {
      if (s.opcode == IORING_OP_URING_CMD) out.push_back(s);
    }
    return out;
  }
  // Submits a read on queue `q`; the one command it sent.
  Sqe Submit(int q, uint16_t tag) {
    queues_[q]->Submit(Read(tag));
    const std::vector<Sqe> s = Commands(contexts_[q].Drain());
    EXPECT_EQ(s.size(), 1u);
    return s.empty() ? Sqe{} : s[0];
  }
  void Cqe(int q, const Sqe& s, int32_t res) {
    io_uring_cqe c{};
    c.user_data = s.user_data;
    c.res = res;
    queues_[q]->OnCqe(c);
    // The queue's loop ends its turn after its CQEs.
    queues_[q]->EndTurn();
  }
  std::vector<Sqe> Advance(int q, int64_t ns) {
    now_ += ns;
    queues_[q]->Poll();
    return Commands(contexts_[q].Drain());
  }

  std::string dir_;
  int64_t now_ = 1'000 * kMs;
  std::array<FakeContext, 2> contexts_{FakeContext(64, 0), FakeContext(64, 1)};
  std::array<std::byte, 4096> buffer_{};
  std::unique_ptr<NvmeBackend> backend_;
  std::array<std::unique_ptr<ublk::QueueBackend>, 2> queues_;
};

TEST_F(SharedQueuesTest, QueueDepthCountsEveryQueuesIo) {
  Start(policy::Policy::kQueueDepth);
  // Queue 0's read takes path 0. Queue 1 has nothing out itself; counted
  // per queue it would pick path 0 too, counted per device path 1.
  const Sqe a = Submit(0, 1);
  EXPECT_EQ(a.fd, 0);
  const Sqe b = Submit(1, 1);
  EXPECT_EQ(b.fd, 1);
  EXPECT_EQ(backend_->selector().inflight(0), 1);
  EXPECT_EQ(backend_->selector().inflight(1), 1);
  // One each: the tie goes to path 0, from either queue.
  const Sqe c = Submit(1, 2);
  EXPECT_EQ(c.fd, 0);
  // Queue 0's read on path 0 completes: path 0 has queue 1's one left,
  // path 1 has one; queue 0's next read takes path 0 (the tie), then
  // path 1 is the emptier one for queue 1.
  now_ += kMs;
  Cqe(0, a, 0);
  EXPECT_EQ(contexts_[0].completed_.at(1), 4096);
  EXPECT_EQ(backend_->selector().inflight(0), 1);
  const Sqe d = Submit(0, 2);
  EXPECT_EQ(d.fd, 0);
  const Sqe e = Submit(1, 3);
  EXPECT_EQ(e.fd, 1);
  const SelectorView v = backend_->selector().View();
  EXPECT_EQ(v.inflight, (std::vector<int>{2, 2}));
  EXPECT_FALSE(v.scorer.has_value());  // only pathwise keeps one
}

TEST_F(SharedQueuesTest, ATurnsCompletionsReachTheSelectorBeforeItsNextChoice) {
  Start(policy::Policy::kQueueDepth);
  const Sqe a = Submit(0, 1);
  const Sqe b = Submit(1, 1);
  const Sqe c = Submit(0, 2);  // the tie goes to path 0
  ASSERT_EQ(a.fd, 0);
  ASSERT_EQ(b.fd, 1);
  ASSERT_EQ(c.fd, 0);
  // One loop turn of queue 0: both its reads on path 0 complete, then a
  // new request arrives. Its choice sees both completions (path 0 empty,
  // path 1 one out: path 0); were they held until the turn's end, path 0
  // would count two and lose.
  now_ += kMs;
  for (const Sqe* s : {&a, &c}) {
    io_uring_cqe cqe{};
    cqe.user_data = s->user_data;
    queues_[0]->OnCqe(cqe);
  }
  const Sqe d = Submit(0, 3);
  EXPECT_EQ(d.fd, 0);
  queues_[0]->EndTurn();
  EXPECT_EQ(backend_->selector().View().inflight, (std::vector<int>{1, 1}));
  // A turn with a completion and no choice after it: the selector has it
  // when the turn ends.
  now_ += kMs;
  io_uring_cqe cqe{};
  cqe.user_data = d.user_data;
  queues_[0]->OnCqe(cqe);
  queues_[0]->EndTurn();
  EXPECT_EQ(backend_->selector().inflight(0), 0);
  EXPECT_EQ(backend_->selector().inflight(1), 1);
  EXPECT_EQ(contexts_[0].completed_.size(), 3u);
}

TEST_F(SharedQueuesTest, PathwiseSeesEveryQueuesIoAndOneScorer) {
  Start(policy::Policy::kPathwise);
  // Every usable path keeps one I/O first: queue 0's goes to path 0, and
  // queue 1's, with path 0 busy on queue 0, to the empty path 1.
  const Sqe a = Submit(0, 1);
  const Sqe b = Submit(1, 1);
  EXPECT_NE(a.fd, b.fd);
  // Completions from both queues feed the one selector: path 0's at 1 ms,
  // path 1's at 5 ms, over one window.
  for (int i = 0; i < 20; ++i) {
    const Sqe x = Submit(0, 2);
    const Sqe y = Submit(1, 2);
    now_ += kMs;
    Cqe(x.fd == 0 ? 0 : 1, x.fd == 0 ? x : y, 0);
    now_ += 4 * kMs;
    Cqe(x.fd == 0 ? 1 : 0, x.fd == 0 ? y : x, 0);
  }
  now_ += 1'000 * kMs;
  Advance(0, 0);  // the tick, from whichever queue is first
  Advance(1, 0);
  const SelectorView v = backend_->selector().View();
  ASSERT_TRUE(v.scorer.has_value());
  EXPECT_EQ(v.scorer->windows(), 1u);  // ticked once, not once per queue
  ASSERT_EQ(v.base_ns.size(), 2u);
  EXPECT_EQ(v.base_ns[0], 1 * kMs);
  EXPECT_EQ(v.base_ns[1], 5 * kMs);
  const auto read = model::Index(model::OpGroup::kRead);
  ASSERT_EQ(v.weights[read].size(), 2u);
  EXPECT_GT(v.weights[read][0], v.weights[read][1]);
  const scoring::PathScore* p0 = v.scorer->Find("0");
  ASSERT_NE(p0, nullptr);
  ASSERT_TRUE(p0->ewma_ns[read].has_value());
  EXPECT_EQ(v.weights[read][0], p0->weight[read]);
}

TEST_F(SharedQueuesTest, CommandRetryDelayHoldsTheRetryOnTheSamePath) {
  Start(policy::Policy::kRoundRobin);
  backend_->SetRetryDelayTimes(
      {nvme::RetryDelayTimes{.crdt = {1, 3, 0}}, nvme::RetryDelayTimes{}});
  const Sqe a = Submit(0, 5);
  ASSERT_EQ(a.fd, 0);
  // Unrecovered read error (media, 281h) with CRD 2: CRDT2 = 300 ms.
  Cqe(0, a, 0x0281 | 0x1000);
  EXPECT_TRUE(Advance(0, 0).empty());
  EXPECT_TRUE(Advance(0, 200 * kMs).empty());
  EXPECT_FALSE(contexts_[0].completed_.contains(5));
  const std::vector<Sqe> retry = Advance(0, 150 * kMs);
  ASSERT_EQ(retry.size(), 1u);
  EXPECT_EQ(retry[0].fd, 0);  // the same path, as a retry goes
  Cqe(0, retry[0], 0);
  EXPECT_EQ(contexts_[0].completed_.at(5), 4096);
}

TEST_F(SharedQueuesTest, CommandRetryDelayBeforeAFailover) {
  Start(policy::Policy::kRoundRobin);
  backend_->SetRetryDelayTimes(
      {nvme::RetryDelayTimes{.crdt = {1, 3, 0}}, nvme::RetryDelayTimes{}});
  const Sqe a = Submit(0, 5);
  ASSERT_EQ(a.fd, 0);
  // Host pathing error (370h) with CRD 1: 100 ms, then another path.
  Cqe(0, a, nvme::kScHostPathError | 0x0800);
  EXPECT_TRUE(backend_->paths().Get(0).failed);
  EXPECT_TRUE(Advance(0, 60 * kMs).empty());
  const std::vector<Sqe> moved = Advance(0, 60 * kMs);
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_EQ(moved[0].fd, 1);
}

TEST_F(SharedQueuesTest, CommandRetryDelayIsBounded) {
  Start(policy::Policy::kRoundRobin, /*max_retry_delay_ns=*/200 * kMs);
  // CRDT3 = 6553.5 s: held back 200 ms only.
  backend_->SetRetryDelayTimes(
      {nvme::RetryDelayTimes{.crdt = {0, 0, 65535}}, nvme::RetryDelayTimes{}});
  EXPECT_EQ(backend_->RetryDelayNs(0, 3), 200 * kMs);
  EXPECT_EQ(backend_->RetryDelayNs(0, 1), 0);  // CRDT1 is 0: no delay
  EXPECT_EQ(backend_->RetryDelayNs(1, 3), 0);
  const Sqe a = Submit(0, 5);
  Cqe(0, a, 0x0281 | 0x1800);
  EXPECT_TRUE(Advance(0, 150 * kMs).empty());
  EXPECT_EQ(Advance(0, 100 * kMs).size(), 1u);
}

TEST_F(SharedQueuesTest, WithoutCrdTheRetryGoesAtOnce) {
  Start(policy::Policy::kRoundRobin);
  backend_->SetRetryDelayTimes(
      {nvme::RetryDelayTimes{.crdt = {1, 3, 5}}, nvme::RetryDelayTimes{}});
  const Sqe a = Submit(0, 5);
  Cqe(0, a, 0x0281);
  const std::vector<Sqe> s = Commands(contexts_[0].Drain());
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].fd, 0);
}

TEST_F(SharedQueuesTest, ADelayedRetryCancelledAtShutdownIsNotCompleted) {
  Start(policy::Policy::kRoundRobin);
  backend_->SetRetryDelayTimes(
      {nvme::RetryDelayTimes{.crdt = {1, 0, 0}}, nvme::RetryDelayTimes{}});
  const Sqe a = Submit(0, 5);
  Cqe(0, a, 0x0281 | 0x0800);
  queues_[0]->Cancel(5);
  EXPECT_TRUE(Advance(0, 500 * kMs).empty());
  EXPECT_FALSE(contexts_[0].completed_.contains(5));
}

}  // namespace
}  // namespace pathwise::datapath

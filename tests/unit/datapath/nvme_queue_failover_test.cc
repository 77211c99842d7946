// SPDX-License-Identifier: Apache-2.0
// The NVMe multipath backend's queue when a command fails: ANA statuses,
// failover and retries, the no-path wait, timeouts, cancels, and
// registered buffers (nvme_queue_fixture.h).
#include "tests/unit/datapath/nvme_queue_fixture.h"

namespace pathwise::datapath {
namespace {

using nvme_queue_test::FakeContext;
using nvme_queue_test::kMs;
using nvme_queue_test::NvmeQueueTest;
using nvme_queue_test::Sqe;

TEST_F(NvmeQueueTest, AnaStatusMovesTheIoAndHoldsThePathForTheRead) {
  Start(policy::Policy::kRoundRobin);
  int reported = -1;
  backend_->paths().SetAnaErrorHandler([&](int p) { reported = p; });
  const Sqe s = Submit(Read(1)).at(0);
  Cqe(s, 0x302);  // ANA inaccessible
  EXPECT_EQ(reported, s.fd);
  const std::vector<Sqe> moved = Commands(context_.Drain());
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_NE(moved[0].fd, s.fd);
  EXPECT_FALSE(backend_->paths().Get(s.fd).failed);
  EXPECT_TRUE(backend_->paths().Get(s.fd).ana_pending);
  Cqe(moved[0], 0);
  EXPECT_EQ(context_.completed_.at(1), 4096);
  for (uint16_t t = 2; t < 6; ++t) EXPECT_NE(Submit(Read(t)).at(0).fd, s.fd);
  // No probes for it: the ANA read decides.
  EXPECT_TRUE(Advance(500 * kMs).empty());
  // Read back as optimized: in the rotation again.
  backend_->paths().SetAnaState(s.fd, model::AnaState::kOptimized);
  std::vector<int> fds;
  for (uint16_t t = 6; t < 10; ++t) fds.push_back(Submit(Read(t)).at(0).fd);
  EXPECT_NE(std::find(fds.begin(), fds.end(), s.fd), fds.end());
  queue_.reset();
  EXPECT_EQ(backend_->Stats().paths[s.fd].failovers, 1u);
  EXPECT_EQ(backend_->Stats().failed_requests, 0u);
}

// With no ANA reader (no handler), an ANA status fails the path as before.
TEST_F(NvmeQueueTest, AnaStatusWithoutAReaderFailsThePath) {
  Start(policy::Policy::kRoundRobin);
  const Sqe s = Submit(Read(1)).at(0);
  Cqe(s, 0x303);  // ANA transition
  EXPECT_TRUE(backend_->paths().Get(s.fd).failed);
  EXPECT_NE(Commands(context_.Drain()).at(0).fd, s.fd);
}

// The controller answered with an error that is not about the path: the
// command goes to the same path again, up to the bound, and then the
// application gets the status's errno.
TEST_F(NvmeQueueTest, MediaErrorRetriesOnTheSamePathThenFails) {
  Start(policy::Policy::kRoundRobin);
  Sqe s = Submit(Read(1)).at(0);
  const int path = s.fd;
  for (int i = 0; i < 7; ++i) {
    Cqe(s, 0x281);  // unrecovered read error
    const std::vector<Sqe> again = Commands(context_.Drain());
    ASSERT_EQ(again.size(), 1u) << i;
    s = again[0];
    EXPECT_EQ(s.fd, path) << i;
  }
  Cqe(s, 0x002);  // invalid field: its errno
  EXPECT_EQ(context_.completed_.at(1), -EOPNOTSUPP);
  EXPECT_FALSE(backend_->paths().Get(path).failed);
}

TEST_F(NvmeQueueTest, DoNotRetryGoesToTheApplication) {
  Start(policy::Policy::kRoundRobin);
  const Sqe s = Submit(Read(1)).at(0);
  Cqe(s, 0x4281);
  EXPECT_EQ(context_.completed_.at(1), -EIO);
  EXPECT_TRUE(Commands(context_.Drain()).empty());
  EXPECT_FALSE(backend_->paths().Get(s.fd).failed);
}

// A retry goes elsewhere when its path went out of use meanwhile.
TEST_F(NvmeQueueTest, ARetryLeavesAPathThatFailedMeanwhile) {
  Start(policy::Policy::kRoundRobin);
  const Sqe a = Submit(Read(1)).at(0);
  ASSERT_EQ(a.fd, 0);
  ASSERT_EQ(Submit(Read(2)).at(0).fd, 1);
  const Sqe c = Submit(Read(3)).at(0);
  ASSERT_EQ(c.fd, 0);
  Cqe(a, -ENOTCONN);  // path 0 fails; read 1 moves to path 1
  ASSERT_EQ(Commands(context_.Drain()).at(0).fd, 1);
  Cqe(c, 0x281);  // read 3 would retry on path 0, which is out of use
  const std::vector<Sqe> retried = Commands(context_.Drain());
  ASSERT_EQ(retried.size(), 1u);
  EXPECT_EQ(retried[0].fd, 1);
}

TEST_F(NvmeQueueTest, WithNoPathIoWaitsThenFailsWithEio) {
  Start(policy::Policy::kRoundRobin);
  Cqe(Submit(Read(1)).at(0), -EIO);
  Cqe(Commands(context_.Drain()).at(0), -EIO);
  // Both paths failed: the request waits, nothing is sent but probes.
  EXPECT_TRUE(Commands(context_.Drain()).empty());
  EXPECT_EQ(context_.completed_.count(1), 0u);
  // Probes fail too; at the no-path timeout (500 ms) the request fails.
  for (int i = 0; i < 9; ++i) {
    for (const Sqe& p : Advance(50 * kMs)) Cqe(p, -ENOTCONN);
    EXPECT_EQ(context_.completed_.count(1), 0u) << i;
  }
  for (const Sqe& p : Advance(60 * kMs)) Cqe(p, -ENOTCONN);
  EXPECT_EQ(context_.completed_.at(1), -EIO);
  queue_.reset();
  EXPECT_EQ(backend_->Stats().no_path_timeouts, 1u);
}

TEST_F(NvmeQueueTest, AWaitingRequestGoesOutWhenAPathReturns) {
  Start(policy::Policy::kRoundRobin);
  Cqe(Submit(Read(1)).at(0), -EIO);
  Cqe(Commands(context_.Drain()).at(0), -EIO);
  std::vector<Sqe> probes = Advance(110 * kMs);
  ASSERT_EQ(probes.size(), 2u);
  Cqe(probes[1], 0);  // path 1 answers
  std::vector<Sqe> sent = Advance(50 * kMs);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].fd, 1);
  EXPECT_EQ(sent[0].cmd.cdw10, 2u);  // the waiting read, not a probe
  Cqe(sent[0], 0);
  EXPECT_EQ(context_.completed_.at(1), 4096);
}

// A command out past the I/O timeout takes its path out of use at once; the
// command itself moves when the kernel ends it.
TEST_F(NvmeQueueTest, TimeoutMarksThePathAndTheAbortFailsOver) {
  Start(policy::Policy::kRoundRobin);
  const Sqe stuck = Submit(Read(1)).at(0);
  ASSERT_EQ(stuck.fd, 0);
  Advance(150 * kMs);
  EXPECT_FALSE(backend_->paths().Get(0).failed);
  Advance(100 * kMs);
  EXPECT_TRUE(backend_->paths().Get(0).failed);
  EXPECT_EQ(Submit(Read(2)).at(0).fd, 1);
  EXPECT_EQ(context_.completed_.count(1), 0u);
  Cqe(stuck, 0x371);  // the kernel aborted it
  const std::vector<Sqe> moved = Commands(context_.Drain());
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_EQ(moved[0].fd, 1);
}

TEST_F(NvmeQueueTest, RetriesAreBounded) {
  Start(policy::Policy::kRoundRobin);
  Sqe s = Submit(Read(1)).at(0);
  // EAGAIN does not fail the path; the request gives up after 8 tries.
  for (int i = 0; i < 7; ++i) {
    Cqe(s, -EAGAIN);
    s = Commands(context_.Drain()).at(0);
  }
  Cqe(s, -EAGAIN);
  EXPECT_EQ(context_.completed_.at(1), -EIO);
  EXPECT_FALSE(backend_->paths().AnyFailed());
}

TEST_F(NvmeQueueTest, ACancelledRequestIsNeverCompleted) {
  Start(policy::Policy::kQueueDepth);
  const Sqe s = Submit(Read(1)).at(0);
  queue_->Cancel(1);
  Cqe(s, 0);
  EXPECT_EQ(context_.completed_.count(1), 0u);
  // Its in-flight count was returned: the next I/O sees both paths empty.
  EXPECT_EQ(Submit(Read(2)).at(0).fd, 0);
}

// Reads and writes into a registered buffer go as fixed-buffer passthru
// (no page mapping per I/O); a buffer outside it, and commands without
// data, do not.
TEST_F(NvmeQueueTest, RegisteredBuffersAreUsedAsFixed) {
  Start(policy::Policy::kRoundRobin);
  EXPECT_EQ(Submit(Read(1)).at(0).uring_cmd_flags, 0u);  // none registered

  context_.fixed_begin_ = buffer_.data();
  context_.fixed_end_ = buffer_.data() + 8192;
  std::vector<Sqe> s = Submit(Read(2, 0, 8192));
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].uring_cmd_flags, IORING_URING_CMD_FIXED);
  EXPECT_EQ(s[0].buf_index, 2u);
  EXPECT_EQ(s[0].cmd.addr, reinterpret_cast<uintptr_t>(buffer_.data()));

  ublk::IoRequest w = Read(3, 0, 4096);
  w.op = ublk::IoOp::kWrite;
  EXPECT_EQ(Submit(w).at(0).uring_cmd_flags, IORING_URING_CMD_FIXED);

  // Past the registered area (a tag's replacement buffer after a cancel).
  EXPECT_EQ(Submit(Read(4, 0, 3 * 4096)).at(0).uring_cmd_flags, 0u);

  ublk::IoRequest f = Read(5, 0, 0);
  f.op = ublk::IoOp::kFlush;
  EXPECT_EQ(Submit(f).at(0).uring_cmd_flags, 0u);
}

}  // namespace
}  // namespace pathwise::datapath

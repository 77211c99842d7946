// SPDX-License-Identifier: Apache-2.0
// The NVMe multipath backend's queue and ghost writes: a write cut off by
// a path failure waits out the write fence before another path takes it;
// what the controller answered, and reads, move at once. And the seeded
// defects the fault tests must catch (nvme_queue_fixture.h).
#include <cerrno>

#include "tests/unit/datapath/nvme_queue_fixture.h"

namespace pathwise::datapath {
namespace {

using nvme_queue_test::kMs;
using nvme_queue_test::NvmeQueueTest;
using nvme_queue_test::Sqe;

constexpr int64_t kFenceNs = 2'000 * kMs;

class FenceTest : public NvmeQueueTest {
 protected:
  void StartFenced() {
    Start(policy::Policy::kRoundRobin);
    backend_->SetWriteFences({kFenceNs, kFenceNs});
  }
  static std::vector<Sqe> OnPath1(std::vector<Sqe> sqes) {
    std::erase_if(sqes, [](const Sqe& s) { return s.fd != 1; });
    return sqes;
  }
};

// The kernel cancelled the write (its timeout or a reset): path 0 may
// still carry it to the media, so it stays held for the fence, then goes
// to path 1; counted as fenced.
TEST_F(FenceTest, AWriteCutOffByAPathFailureWaitsTheFence) {
  StartFenced();
  const Sqe w = Submit(Write(1)).at(0);
  ASSERT_EQ(w.fd, 0);
  Cqe(w, -EINTR);
  EXPECT_TRUE(backend_->paths().Get(0).failed);
  EXPECT_TRUE(Commands(context_.Drain()).empty());
  // Probes of path 0 go out meanwhile; the write goes to path 1.
  EXPECT_TRUE(OnPath1(Advance(kFenceNs - 200 * kMs)).empty());
  const std::vector<Sqe> moved = OnPath1(Advance(300 * kMs));
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_EQ(moved[0].fd, 1);
  Cqe(moved[0], 0);
  EXPECT_EQ(context_.completed_.at(1), 4096);
  queue_.reset();
  EXPECT_EQ(backend_->Stats().paths[0].fenced_writes, 1u);
}

// Host Path Error and Host Aborted are the kernel's own statuses for a
// command it cut off: fenced too.
TEST_F(FenceTest, HostPathStatusesAreFenced) {
  StartFenced();
  uint16_t tag = 1;
  for (const int32_t status : {0x370, 0x371}) {
    backend_->paths().OnProbeResult(0, true, now_);
    const Sqe w = Submit(Write(tag)).at(0);
    ASSERT_EQ(w.fd, 0) << status;
    Cqe(w, status);
    EXPECT_TRUE(Commands(context_.Drain()).empty()) << status;
    EXPECT_TRUE(OnPath1(Advance(kFenceNs - 200 * kMs)).empty()) << status;
    EXPECT_EQ(OnPath1(Advance(300 * kMs)).size(), 1u) << status;
    Submit(Read(++tag));  // round-robin: the next write starts on path 0
    ++tag;
  }
}

// A read cut off the same way moves at once: a late read changes nothing
// on the media.
TEST_F(FenceTest, AReadCutOffMovesAtOnce) {
  StartFenced();
  const Sqe r = Submit(Read(1)).at(0);
  Cqe(r, -EINTR);
  const std::vector<Sqe> moved = Commands(context_.Drain());
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_EQ(moved[0].fd, 1);
}

// The controller answered (an ANA status, a media error): it will not
// execute the command, so no fence.
TEST_F(FenceTest, AnAnsweredWriteIsNotFenced) {
  StartFenced();
  backend_->paths().SetAnaErrorHandler([](int) {});
  const Sqe w = Submit(Write(1)).at(0);
  Cqe(w, 0x302);  // ANA inaccessible
  ASSERT_EQ(Commands(context_.Drain()).size(), 1u);
  const Sqe w2 = Submit(Write(2)).at(0);
  Cqe(w2, 0x281);  // unrecovered read error: the same path again
  ASSERT_EQ(Commands(context_.Drain()).size(), 1u);
  queue_.reset();
  EXPECT_EQ(backend_->Stats().paths[0].fenced_writes +
                backend_->Stats().paths[1].fenced_writes,
            0u);
}

// Write Zeroes and Deallocate change the media too.
TEST_F(FenceTest, WriteZeroesAndDiscardAreFenced) {
  StartFenced();
  uint16_t tag = 1;
  for (const ublk::IoOp op : {ublk::IoOp::kWriteZeroes, ublk::IoOp::kDiscard}) {
    backend_->paths().OnProbeResult(0, true, now_);
    ublk::IoRequest r = Write(tag);
    r.op = op;
    const Sqe s = Submit(r).at(0);
    ASSERT_EQ(s.fd, 0);
    Cqe(s, -ENOTCONN);
    EXPECT_TRUE(OnPath1(Commands(context_.Drain())).empty());
    EXPECT_TRUE(OnPath1(Advance(kFenceNs - 200 * kMs)).empty());
    EXPECT_EQ(OnPath1(Advance(300 * kMs)).size(), 1u);
    Submit(Read(++tag));
    ++tag;
  }
}

// A write cut off on its last attempt fails, but only once the fence is
// over: told at once, the client could write the blocks again (the next
// write below, through the other path), and the cut-off write landing
// late would overwrite that acknowledged one.
TEST_F(FenceTest, AWriteCutOffOnItsLastAttemptFailsOnlyAfterTheFence) {
  max_attempts_ = 1;
  StartFenced();
  const Sqe w = Submit(Write(1)).at(0);
  ASSERT_EQ(w.fd, 0);
  Cqe(w, -EINTR);
  EXPECT_FALSE(context_.completed_.contains(1));
  Advance(kFenceNs - 200 * kMs);
  EXPECT_FALSE(context_.completed_.contains(1));
  Advance(300 * kMs);
  ASSERT_TRUE(context_.completed_.contains(1));
  EXPECT_EQ(context_.completed_.at(1), -EIO);
  queue_.reset();
  EXPECT_EQ(backend_->Stats().paths[0].fenced_writes, 1u);
}

// Out of attempts without a fence, and a read out of attempts: failed at
// once.
TEST_F(NvmeQueueTest, OutOfAttemptsWithoutAFenceFailsAtOnce) {
  max_attempts_ = 1;
  Start(policy::Policy::kRoundRobin);
  const Sqe w = Submit(Write(1)).at(0);
  Cqe(w, -EINTR);
  ASSERT_TRUE(context_.completed_.contains(1));
  EXPECT_EQ(context_.completed_.at(1), -EIO);
}
TEST_F(FenceTest, AReadOutOfAttemptsFailsAtOnce) {
  max_attempts_ = 1;
  StartFenced();
  const Sqe r = Submit(Read(1)).at(0);
  Cqe(r, -EINTR);
  ASSERT_TRUE(context_.completed_.contains(1));
  EXPECT_EQ(context_.completed_.at(1), -EIO);
}

// Without a fence (--write-fence 0s, the kernel's behaviour) the write
// moves at once.
TEST_F(NvmeQueueTest, WithoutAFenceACutOffWriteMovesAtOnce) {
  Start(policy::Policy::kRoundRobin);
  const Sqe w = Submit(Write(1)).at(0);
  Cqe(w, -EINTR);
  const std::vector<Sqe> moved = Commands(context_.Drain());
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_EQ(moved[0].fd, 1);
}

// Seeded defect: the write is acknowledged as it goes out; its CQE, when
// it comes, changes nothing. Reads are untouched.
TEST_F(NvmeQueueTest, SeededAckBeforeCompletion) {
  defect_ = SeededDefect::kAckBeforeCompletion;
  Start(policy::Policy::kRoundRobin);
  const Sqe w = Submit(Write(1)).at(0);
  EXPECT_EQ(context_.completed_.at(1), 4096);
  Cqe(w, -EIO);
  EXPECT_EQ(context_.completed_.at(1), 4096);
  const Sqe r = Submit(Read(2)).at(0);
  EXPECT_EQ(context_.completed_.count(2), 0u);
  Cqe(r, 0);
  EXPECT_EQ(context_.completed_.at(2), 4096);
}

// Seeded defect: a timed-out write goes to the other path at once while
// the first may still run it.
TEST_F(NvmeQueueTest, SeededRetryTimedOutAtOnce) {
  defect_ = SeededDefect::kRetryTimedOutAtOnce;
  Start(policy::Policy::kRoundRobin);
  const Sqe w = Submit(Write(1)).at(0);
  ASSERT_EQ(w.fd, 0);
  std::vector<Sqe> out = Advance(250 * kMs);
  std::erase_if(out, [](const Sqe& s) { return s.fd == 0; });
  ASSERT_EQ(out.size(), 1u);
  Cqe(out[0], 0);
  EXPECT_EQ(context_.completed_.at(1), 4096);
  Cqe(w, 0);  // the first one, late: ignored
  EXPECT_EQ(context_.completed_.size(), 1u);
}

}  // namespace
}  // namespace pathwise::datapath

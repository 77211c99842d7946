// SPDX-License-Identifier: Apache-2.0
// The NVMe multipath backend's queue: the commands it puts on the ring and
// path selection through the policy library's selectors, ANA states
// included (nvme_queue_fixture.h).
#include "tests/unit/datapath/nvme_queue_fixture.h"

namespace pathwise::datapath {
namespace {

using nvme_queue_test::FakeContext;
using nvme_queue_test::kMs;
using nvme_queue_test::NvmeQueueTest;
using nvme_queue_test::Sqe;

TEST_F(NvmeQueueTest, ReadIsAnNvmeReadOnARegisteredDevice) {
  Start(policy::Policy::kRoundRobin);
  const std::vector<Sqe> s = Submit(Read(3, 8 * 4096, 2 * 4096));
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].cmd_op, NVME_URING_CMD_IO);
  EXPECT_EQ(s[0].flags & IOSQE_FIXED_FILE, IOSQE_FIXED_FILE);
  EXPECT_EQ(s[0].fd, 0);  // path 0's registered index
  EXPECT_EQ(s[0].cmd.opcode, nvme::kIoRead);
  EXPECT_EQ(s[0].cmd.nsid, 1u);
  EXPECT_EQ(s[0].cmd.cdw10, 8u);  // LBA in 4 KiB blocks
  EXPECT_EQ(s[0].cmd.cdw12, 1u);  // two blocks, 0-based
  EXPECT_EQ(s[0].cmd.data_len, 8192u);
  EXPECT_EQ(s[0].cmd.addr, reinterpret_cast<uintptr_t>(buffer_.data()));
  EXPECT_TRUE(s[0].user_data & ublk::QueueContext::kBackendBit);
  now_ += 2 * kMs;
  Cqe(s[0], 0);
  EXPECT_EQ(context_.completed_.at(3), 8192);
  queue_.reset();  // publishes the final counters
  const DatapathStats st = backend_->Stats();
  EXPECT_EQ(st.requests, 1u);
  EXPECT_EQ(st.paths[0].ios, 1u);
  EXPECT_EQ(st.paths[0].bytes, 8192u);
  EXPECT_EQ(st.paths[0].selections, 1u);
  EXPECT_EQ(st.paths[0].latency.Count(), 1u);
  EXPECT_EQ(st.paths[1].ios, 0u);
}

TEST_F(NvmeQueueTest, EveryOpHasItsCommand) {
  Start(policy::Policy::kRoundRobin);
  ublk::IoRequest w = Read(1);
  w.op = ublk::IoOp::kWrite;
  w.fua = true;
  std::vector<Sqe> s = Submit(w);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].cmd.opcode, nvme::kIoWrite);
  EXPECT_EQ(s[0].cmd.cdw12, nvme::kCdw12Fua);

  ublk::IoRequest d = Read(2, 4096 * 100, 4096 * 16);
  d.op = ublk::IoOp::kDiscard;
  d.buffer = {};
  s = Submit(d);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].cmd.opcode, nvme::kIoDatasetManagement);
  const auto* range = reinterpret_cast<const nvme::DsmRange*>(s[0].cmd.addr);
  EXPECT_EQ(range->slba, 100u);
  EXPECT_EQ(range->blocks, 16u);

  ublk::IoRequest z = Read(4, 0, 4096 * 4);
  z.op = ublk::IoOp::kWriteZeroes;
  z.no_unmap = true;
  s = Submit(z);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].cmd.opcode, nvme::kIoWriteZeroes);
  EXPECT_EQ(s[0].cmd.cdw12, 3u);  // no deallocate

  ublk::IoRequest f = Read(5, 0, 0);
  f.op = ublk::IoOp::kFlush;
  s = Submit(f);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].cmd.opcode, nvme::kIoFlush);
  Cqe(s[0], 0);
  EXPECT_EQ(context_.completed_.at(5), 0);
}

TEST_F(NvmeQueueTest, RoundRobinAlternates) {
  Start(policy::Policy::kRoundRobin);
  std::vector<int> fds;
  for (uint16_t t = 0; t < 4; ++t) fds.push_back(Submit(Read(t)).at(0).fd);
  EXPECT_EQ(fds, (std::vector<int>{0, 1, 0, 1}));
}

TEST_F(NvmeQueueTest, QueueDepthPicksTheEmptierPath) {
  Start(policy::Policy::kQueueDepth);
  const Sqe a = Submit(Read(0)).at(0);
  const Sqe b = Submit(Read(1)).at(0);
  EXPECT_NE(a.fd, b.fd);
  Cqe(a, 0);  // a's path is now empty, b's has one
  EXPECT_EQ(Submit(Read(2)).at(0).fd, a.fd);
}

// The selector learns from the datapath's own latencies: with path 0 at
// 30 ms and path 1 at 1 ms, pathwise sends nearly everything to path 1.
TEST_F(NvmeQueueTest, PathwiseFollowsTheMeasuredLatencies) {
  Start(policy::Policy::kPathwise);
  std::array<int, 2> chosen{};
  ClosedLoop(8, now_ + 5'000 * kMs, [&](const Sqe& s) {
    ++chosen[s.fd];
    return now_ + (s.fd == 0 ? 30 : 1) * kMs;
  });
  EXPECT_GT(chosen[1], 20 * chosen[0]) << chosen[0] << " vs " << chosen[1];
}

// The selector learns what one more I/O costs on a path at the load it is
// sent at, from the datapath's own completions: path 0 is a link that sends
// one I/O at a time (334 us, then 340 us more), path 1 serves one in 830 us.
// At 4 outstanding two on each is the best split (5377 a second); filled to
// its cap (three) path 0 gets 2994 of 4199, path 1 29 %. The share shows
// that the queue hands the load it sent at back with the completion.
TEST_F(NvmeQueueTest, PathwiseLearnsTheLatencyByLoadAtSending) {
  Start(policy::Policy::kPathwise);
  std::array<int, 2> done{};
  int64_t link_free = 0;
  const int64_t end = now_ + 4'000 * kMs;
  ClosedLoop(
      4, end,
      [&](const Sqe& s) {
        if (s.fd != 0) return now_ + 830'000;
        link_free = std::max(link_free, now_) + 334'000;
        return link_free + 340'000;
      },
      [&](const Sqe& s) {
        if (now_ >= end - 1'000 * kMs) ++done[s.fd];
      });
  EXPECT_GE(done[0] + done[1], 5000) << done[0] << " + " << done[1];
  EXPECT_GE(done[1] * 100, 38 * (done[0] + done[1]))
      << done[0] << " + " << done[1];
}

TEST_F(NvmeQueueTest, PathErrorFailsOverAndProbesBringThePathBack) {
  Start(policy::Policy::kRoundRobin);
  const Sqe first = Submit(Read(7)).at(0);
  ASSERT_EQ(first.fd, 0);
  Cqe(first, 0x370);  // host path error
  std::vector<Sqe> again = Commands(context_.Drain());
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].fd, 1);  // resubmitted on the other path
  EXPECT_TRUE(backend_->paths().Get(0).failed);
  EXPECT_EQ(context_.completed_.count(7), 0u);
  Cqe(again[0], 0);
  EXPECT_EQ(context_.completed_.at(7), 4096);
  // New I/O avoids the failed path.
  for (uint16_t t = 10; t < 14; ++t) EXPECT_EQ(Submit(Read(t)).at(0).fd, 1);

  // After the back-off (100 ms) a probe reads block 0 of path 0.
  EXPECT_TRUE(Advance(50 * kMs).empty());
  std::vector<Sqe> probe = Advance(60 * kMs);
  ASSERT_EQ(probe.size(), 1u);
  EXPECT_EQ(probe[0].fd, 0);
  EXPECT_EQ(probe[0].cmd.opcode, nvme::kIoRead);
  EXPECT_EQ(probe[0].cmd.cdw10, 0u);
  Cqe(probe[0], -ENOTCONN);  // still down: the back-off doubles
  EXPECT_TRUE(backend_->paths().Get(0).failed);
  EXPECT_TRUE(Advance(150 * kMs).empty());
  probe = Advance(60 * kMs);
  ASSERT_EQ(probe.size(), 1u);
  Cqe(probe[0], 0);
  EXPECT_FALSE(backend_->paths().Get(0).failed);
  std::vector<int> fds;
  for (uint16_t t = 20; t < 22; ++t) fds.push_back(Submit(Read(t)).at(0).fd);
  EXPECT_NE(std::find(fds.begin(), fds.end(), 0), fds.end());
  queue_.reset();
  const DatapathStats st = backend_->Stats();
  EXPECT_EQ(st.paths[0].errors, 1u);
  EXPECT_EQ(st.paths[0].failovers, 1u);
  EXPECT_EQ(st.paths[0].probes, 2u);
  EXPECT_EQ(st.paths[0].probe_failures, 1u);
  EXPECT_EQ(st.paths[0].errors_by_class[model::ErrorClassIndex(
                model::NvmeStatusClass::kPath)],
            1u);
  EXPECT_EQ(st.failed_requests, 0u);
}

// The ANA seam: the selector's view follows PathStates' ANA states, with
// the kernel's rule (non-optimized only when no optimized path is usable).
TEST_F(NvmeQueueTest, AnaStatesSteerSelection) {
  Start(policy::Policy::kRoundRobin);
  backend_->paths().SetAnaState(0, model::AnaState::kNonOptimized);
  for (uint16_t t = 0; t < 3; ++t) EXPECT_EQ(Submit(Read(t)).at(0).fd, 1);
  backend_->paths().SetAnaState(1, model::AnaState::kInaccessible);
  for (uint16_t t = 3; t < 5; ++t) EXPECT_EQ(Submit(Read(t)).at(0).fd, 0);
  backend_->paths().SetAnaState(0, model::AnaState::kOptimized);
  backend_->paths().SetAnaState(1, model::AnaState::kOptimized);
  std::vector<int> fds;
  for (uint16_t t = 5; t < 7; ++t) fds.push_back(Submit(Read(t)).at(0).fd);
  std::sort(fds.begin(), fds.end());
  EXPECT_EQ(fds, (std::vector<int>{0, 1}));  // both back in the rotation
}

// An ANA status fails over and tells the ANA handler which path; the path
// is not failed, but takes no I/O until its ANA state is read again.
}  // namespace
}  // namespace pathwise::datapath

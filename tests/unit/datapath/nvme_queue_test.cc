// The NVMe multipath backend's queue on a fake ublk queue and a fake clock:
// the commands it puts on the ring, path selection through the policy
// library's selectors, failover, the no-path wait, timeouts and probes.
// The ng devices are regular files here (the backend only registers them;
// nothing is submitted to a real ring).
#include <linux/nvme_ioctl.h>
#include <stdlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <vector>

#include "datapath/nvme_backend.h"
#include "gtest/gtest.h"
#include "nvme/io.h"
#include "tests/unit/datapath/fake_queue_context.h"

namespace pathwise::datapath {
namespace {

namespace fs = std::filesystem;
using testing_util::FakeContext;
using testing_util::Sqe;

constexpr int64_t kMs = 1'000'000;

class NvmeQueueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/pathwise-dp-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override {
    queue_.reset();
    backend_.reset();
    fs::remove_all(dir_);
  }

  void Start(policy::Policy policy, int paths = 2) {
    NamespaceGroup g;
    g.id = "uuid.1";
    for (int i = 0; i < paths; ++i) {
      NamespacePath p;
      p.name = "nvme" + std::to_string(i) + "n1";
      p.generic = "ng" + std::to_string(i) + "n1";
      p.controller_instance = i;
      p.nsid = 1;
      p.size_sectors = 1 << 20;
      p.logical_block_size = 4096;
      p.physical_block_size = 4096;
      p.max_hw_sectors_kb = 256;
      p.discard_max_hw_bytes = 1 << 30;
      p.write_zeroes_max_bytes = 1 << 30;
      std::ofstream(dir_ + "/" + p.generic) << "x";
      g.paths.push_back(p);
    }
    BackendOptions o;
    o.policy = policy;
    o.dev_dir = dir_;
    o.no_path_timeout = absl::Milliseconds(500);
    o.io_timeout = absl::Milliseconds(200);
    o.retry.backoff_initial_ns = 100 * kMs;
    o.clock = [this] { return now_; };
    auto b = NvmeBackend::Open(g, o);
    ASSERT_TRUE(b.ok()) << b.status();
    backend_ = *std::move(b);
    ASSERT_TRUE(context_.ok());
    auto q = backend_->AttachQueue(context_);
    ASSERT_TRUE(q.ok()) << q.status();
    queue_ = *std::move(q);
  }

  ublk::IoRequest Read(uint16_t tag, uint64_t offset = 8192,
                       uint32_t length = 4096) {
    ublk::IoRequest r;
    r.tag = tag;
    r.op = ublk::IoOp::kRead;
    r.offset = offset;
    r.length = length;
    r.buffer = std::span<std::byte>(buffer_.data(), length);
    return r;
  }

  // The NVMe commands among `sqes` (timers left out).
  static std::vector<Sqe> Commands(const std::vector<Sqe>& sqes) {
    std::vector<Sqe> out;
    for (const Sqe& s : sqes) {
      if (s.opcode == IORING_OP_URING_CMD) out.push_back(s);
    }
    return out;
  }
  std::vector<Sqe> Submit(const ublk::IoRequest& r) {
    queue_->Submit(r);
    return Commands(context_.Drain());
  }
  void Cqe(const Sqe& s, int32_t res) {
    io_uring_cqe c{};
    c.user_data = s.user_data;
    c.res = res;
    queue_->OnCqe(c);
    // The queue's loop ends its turn after its CQEs.
    queue_->EndTurn();
  }
  // Advances the clock and lets the queue do its periodic work.
  std::vector<Sqe> Advance(int64_t ns) {
    now_ += ns;
    queue_->Poll();
    return Commands(context_.Drain());
  }

  std::string dir_;
  int64_t now_ = 1'000 * kMs;
  FakeContext context_{64};
  std::array<std::byte, 1 << 20> buffer_{};
  std::unique_ptr<NvmeBackend> backend_;
  std::unique_ptr<ublk::QueueBackend> queue_;
};

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
  struct Out {
    int64_t done;
    Sqe sqe;
    uint16_t tag;
  };
  std::vector<Out> out;
  std::array<int, 2> chosen{};
  uint16_t next = 0;
  const int64_t end = now_ + 5'000 * kMs;
  auto issue = [&](uint16_t tag) {
    const Sqe s = Submit(Read(tag)).at(0);
    ++chosen[s.fd];
    out.push_back({now_ + (s.fd == 0 ? 30 : 1) * kMs, s, tag});
  };
  for (; next < 8; ++next) issue(next);
  while (now_ < end) {
    auto first = std::min_element(
        out.begin(), out.end(),
        [](const Out& a, const Out& b) { return a.done < b.done; });
    const Out o = *first;
    out.erase(first);
    now_ = o.done;
    Cqe(o.sqe, 0);
    queue_->Poll();
    context_.Drain();
    issue(o.tag);
  }
  EXPECT_GT(chosen[1], 20 * chosen[0]) << chosen[0] << " vs " << chosen[1];
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

// SPDX-License-Identifier: Apache-2.0
// The fixture of the NVMe multipath backend's queue tests: the queue on a
// fake ublk queue and a fake clock, over ng devices that are regular files
// (the backend only registers them; nothing is submitted to a real ring).
#ifndef PATHWISE_TESTS_UNIT_DATAPATH_NVME_QUEUE_FIXTURE_H_
#define PATHWISE_TESTS_UNIT_DATAPATH_NVME_QUEUE_FIXTURE_H_

#include <linux/nvme_ioctl.h>
#include <stdlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <vector>

#include "datapath/nvme_backend.h"
#include "gtest/gtest.h"
#include "nvme/io.h"
#include "tests/unit/datapath/fake_queue_context.h"

namespace pathwise::datapath::nvme_queue_test {

namespace fs = std::filesystem;
using testing_util::FakeContext;
using testing_util::Sqe;

inline constexpr int64_t kMs = 1'000'000;

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
    o.defect = defect_;
    o.retry.max_attempts = max_attempts_;
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

  ublk::IoRequest Write(uint16_t tag, uint64_t offset = 8192,
                        uint32_t length = 4096) {
    ublk::IoRequest r = Read(tag, offset, length);
    r.op = ublk::IoOp::kWrite;
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

  // A closed loop of `outstanding` reads until `end_ns`: each read's
  // command completes (successfully) at the time `done_at` gives for it when
  // it is issued, and the next read goes out at once; `on_done` sees each
  // completion after the queue has.
  void ClosedLoop(int outstanding, int64_t end_ns,
                  const std::function<int64_t(const Sqe&)>& done_at,
                  const std::function<void(const Sqe&)>& on_done = {}) {
    struct Out {
      int64_t done;
      Sqe sqe;
      uint16_t tag;
    };
    std::vector<Out> out;
    auto issue = [&](uint16_t tag) {
      const Sqe s = Submit(Read(tag)).at(0);
      out.push_back({done_at(s), s, tag});
    };
    for (int t = 0; t < outstanding; ++t) issue(static_cast<uint16_t>(t));
    while (now_ < end_ns) {
      auto first = std::min_element(
          out.begin(), out.end(),
          [](const Out& a, const Out& b) { return a.done < b.done; });
      const Out o = *first;
      out.erase(first);
      now_ = o.done;
      Cqe(o.sqe, 0);
      if (on_done) on_done(o.sqe);
      queue_->Poll();
      context_.Drain();
      issue(o.tag);
    }
  }

  std::string dir_;
  SeededDefect defect_ = SeededDefect::kNone;  // set before Start
  int max_attempts_ = 8;                       // set before Start
  int64_t now_ = 1'000 * kMs;
  FakeContext context_{64};
  std::array<std::byte, 1 << 20> buffer_{};
  std::unique_ptr<NvmeBackend> backend_;
  std::unique_ptr<ublk::QueueBackend> queue_;
};

}  // namespace pathwise::datapath::nvme_queue_test

#endif  // PATHWISE_TESTS_UNIT_DATAPATH_NVME_QUEUE_FIXTURE_H_

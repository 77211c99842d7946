// SPDX-License-Identifier: Apache-2.0
#include "datapath/ublk/queue_core.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <vector>

namespace pathwise::datapath::ublk {
namespace {

constexpr uint16_t kDepth = 4;
constexpr uint32_t kBufferBytes = 64 << 10;

struct Command {
  bool commit = false;
  uint16_t tag = 0;
  int32_t result = 0;
  std::byte* buffer = nullptr;
};

class FakeSink : public CommandSink {
 public:
  void Fetch(uint16_t tag, std::byte* buffer) override {
    commands.push_back({false, tag, 0, buffer});
  }
  void Commit(uint16_t tag, int32_t result, std::byte* buffer) override {
    commands.push_back({true, tag, result, buffer});
  }
  std::vector<Command> commands;
};

class FakeBackend : public QueueBackend {
 public:
  void Submit(const IoRequest& request) override {
    submitted.push_back(request);
    if (complete_inline) core->Complete(request.tag, inline_result);
  }
  void OnCqe(const io_uring_cqe&) override {}
  void Cancel(uint16_t tag) override { cancelled.push_back(tag); }

  QueueCore* core = nullptr;
  bool complete_inline = false;
  int32_t inline_result = 0;
  std::vector<IoRequest> submitted;
  std::vector<uint16_t> cancelled;
};

ublksrv_io_desc Iod(uint8_t op, uint64_t sector, uint32_t sectors) {
  ublksrv_io_desc iod{};
  iod.op_flags = op;
  iod.start_sector = sector;
  iod.nr_sectors = sectors;
  return iod;
}

class QueueCoreTest : public ::testing::Test {
 protected:
  QueueCoreTest() {
    std::vector<std::byte*> buffers;
    for (auto& b : storage_) buffers.push_back(b.data());
    Geometry g;
    g.size_bytes = 1 << 30;
    g.volatile_cache = true;
    core_ = std::make_unique<QueueCore>(kDepth, kBufferBytes, g, sink_, buffers,
                                        [this] {
                                          fresh_.emplace_back(kBufferBytes);
                                          return fresh_.back().data();
                                        });
    backend_.core = core_.get();
    core_->set_backend(&backend_);
    core_->Start();
  }

  const Command& last() const { return sink_.commands.back(); }

  std::vector<std::vector<std::byte>> storage_ =
      std::vector<std::vector<std::byte>>(kDepth,
                                          std::vector<std::byte>(kBufferBytes));
  std::vector<std::vector<std::byte>> fresh_;
  FakeSink sink_;
  FakeBackend backend_;
  std::unique_ptr<QueueCore> core_;
};

TEST_F(QueueCoreTest, StartFetchesEveryTagWithItsBuffer) {
  ASSERT_EQ(sink_.commands.size(), kDepth);
  for (uint16_t t = 0; t < kDepth; ++t) {
    EXPECT_FALSE(sink_.commands[t].commit);
    EXPECT_EQ(sink_.commands[t].tag, t);
    EXPECT_EQ(sink_.commands[t].buffer, storage_[t].data());
    EXPECT_EQ(core_->state(t), QueueCore::TagState::kInKernel);
  }
}

TEST_F(QueueCoreTest, RequestGoesToTheBackendAndItsResultIsCommitted) {
  core_->OnCommandDone(2, UBLK_IO_RES_OK, Iod(UBLK_IO_OP_READ, 8, 8));
  ASSERT_EQ(backend_.submitted.size(), 1u);
  EXPECT_EQ(backend_.submitted[0].tag, 2);
  EXPECT_EQ(backend_.submitted[0].offset, 4096u);
  EXPECT_EQ(backend_.submitted[0].buffer.data(), storage_[2].data());
  EXPECT_EQ(core_->state(2), QueueCore::TagState::kInBackend);
  EXPECT_EQ(core_->in_backend(), 1);
  const size_t before = sink_.commands.size();
  core_->Complete(2, 4096);
  ASSERT_EQ(sink_.commands.size(), before + 1);
  EXPECT_TRUE(last().commit);
  EXPECT_EQ(last().tag, 2);
  EXPECT_EQ(last().result, 4096);
  EXPECT_EQ(last().buffer, storage_[2].data());
  EXPECT_EQ(core_->state(2), QueueCore::TagState::kInKernel);
  EXPECT_EQ(core_->in_backend(), 0);
  EXPECT_EQ(core_->counters().requests, 1u);
  EXPECT_EQ(core_->counters().completed, 1u);
  EXPECT_EQ(core_->counters().failed, 0u);
}

TEST_F(QueueCoreTest, ResultsAreKeptWithinWhatTheRequestAskedFor) {
  core_->OnCommandDone(0, UBLK_IO_RES_OK, Iod(UBLK_IO_OP_READ, 0, 8));
  core_->Complete(0, 1 << 20);
  EXPECT_EQ(last().result, 4096);
  core_->OnCommandDone(0, UBLK_IO_RES_OK, Iod(UBLK_IO_OP_FLUSH, 0, 0));
  core_->Complete(0, 17);
  EXPECT_EQ(last().result, 0);
  core_->OnCommandDone(0, UBLK_IO_RES_OK, Iod(UBLK_IO_OP_WRITE, 0, 8));
  core_->Complete(0, -ENOSPC);
  EXPECT_EQ(last().result, -ENOSPC);
  EXPECT_EQ(core_->counters().failed, 1u);
}

TEST_F(QueueCoreTest, InlineCompletionFromSubmitWorks) {
  backend_.complete_inline = true;
  backend_.inline_result = 4096;
  core_->OnCommandDone(1, UBLK_IO_RES_OK, Iod(UBLK_IO_OP_WRITE, 0, 8));
  EXPECT_TRUE(last().commit);
  EXPECT_EQ(last().result, 4096);
  EXPECT_EQ(core_->in_backend(), 0);
}

TEST_F(QueueCoreTest, BadDescriptorIsFailedWithoutTheBackend) {
  core_->OnCommandDone(3, UBLK_IO_RES_OK, Iod(UBLK_IO_OP_DISCARD, 0, 8));
  EXPECT_TRUE(backend_.submitted.empty());
  EXPECT_TRUE(last().commit);
  EXPECT_EQ(last().result, -EOPNOTSUPP);
  EXPECT_EQ(core_->counters().rejected, 1u);
}

TEST_F(QueueCoreTest, StrayCompletionsAreCountedNotCommitted) {
  const size_t before = sink_.commands.size();
  core_->Complete(1, 0);   // the kernel holds tag 1
  core_->Complete(99, 0);  // no such tag
  EXPECT_EQ(sink_.commands.size(), before);
  EXPECT_EQ(core_->counters().stray_completions, 2u);
}

TEST_F(QueueCoreTest, AbortsEndTheQueue) {
  for (uint16_t t = 0; t < kDepth; ++t) {
    EXPECT_FALSE(core_->Finished());
    core_->OnCommandDone(t, UBLK_IO_RES_ABORT, {});
  }
  EXPECT_TRUE(core_->Finished());
  EXPECT_EQ(core_->counters().command_errors, 0u);
}

TEST_F(QueueCoreTest, RefusedCommandKillsOnlyItsTag) {
  core_->OnCommandDone(1, -EINVAL, {});
  EXPECT_EQ(core_->state(1), QueueCore::TagState::kDead);
  EXPECT_EQ(core_->counters().command_errors, 1u);
  EXPECT_FALSE(core_->Finished());
  core_->OnCommandDone(0, UBLK_IO_RES_OK, Iod(UBLK_IO_OP_READ, 0, 8));
  EXPECT_EQ(backend_.submitted.size(), 1u);
}

TEST_F(QueueCoreTest, ShutdownServesUntilTheGraceThenAbandons) {
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  core_->OnCommandDone(0, UBLK_IO_RES_OK, Iod(UBLK_IO_OP_WRITE, 0, 8));
  core_->OnCommandDone(1, UBLK_IO_RES_OK, Iod(UBLK_IO_OP_READ, 8, 8));
  core_->BeginStop(t0, absl::Seconds(5));
  // Within the grace: business as usual.
  core_->OnCommandDone(2, UBLK_IO_RES_OK, Iod(UBLK_IO_OP_READ, 16, 8));
  EXPECT_EQ(backend_.submitted.size(), 3u);
  core_->Complete(1, 4096);
  core_->Tick(t0 + absl::Seconds(4));
  EXPECT_TRUE(backend_.cancelled.empty());
  EXPECT_EQ(core_->in_backend(), 2);

  // Past it: what the backend holds is cancelled and failed, with a fresh
  // buffer for the tag's next request.
  const size_t before = sink_.commands.size();
  core_->Tick(t0 + absl::Seconds(6));
  EXPECT_EQ(backend_.cancelled, (std::vector<uint16_t>{0, 2}));
  ASSERT_EQ(sink_.commands.size(), before + 2);
  for (size_t i = before; i < sink_.commands.size(); ++i) {
    EXPECT_TRUE(sink_.commands[i].commit);
    EXPECT_EQ(sink_.commands[i].result, -EIO);
  }
  EXPECT_NE(sink_.commands[before].buffer, storage_[0].data());
  EXPECT_EQ(core_->buffer(0), sink_.commands[before].buffer);
  EXPECT_EQ(core_->buffer(1), storage_[1].data());
  EXPECT_EQ(core_->counters().abandoned, 2u);
  EXPECT_EQ(core_->in_backend(), 0);

  // The backend's late answer is ignored; new requests fail at once.
  core_->Complete(0, 4096);
  EXPECT_EQ(core_->counters().stray_completions, 1u);
  core_->OnCommandDone(3, UBLK_IO_RES_OK, Iod(UBLK_IO_OP_READ, 0, 8));
  EXPECT_EQ(backend_.submitted.size(), 3u);
  EXPECT_EQ(last().tag, 3);
  EXPECT_EQ(last().result, -EIO);

  for (uint16_t t = 0; t < kDepth; ++t) {
    core_->OnCommandDone(t, UBLK_IO_RES_ABORT, {});
  }
  EXPECT_TRUE(core_->Finished());
}

}  // namespace
}  // namespace pathwise::datapath::ublk

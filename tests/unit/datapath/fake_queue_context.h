// SPDX-License-Identifier: Apache-2.0
// A fake ublk queue for the NVMe backend's queues: a real io_uring (the
// backend registers the ng devices on it) whose SQEs are kept aside for the
// test to read instead of being submitted, and completions recorded.
#ifndef PATHWISE_TESTS_UNIT_DATAPATH_FAKE_QUEUE_CONTEXT_H_
#define PATHWISE_TESTS_UNIT_DATAPATH_FAKE_QUEUE_CONTEXT_H_

#include <linux/nvme_ioctl.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <vector>

#include "datapath/ublk/backend.h"

namespace pathwise::testing_util {

struct Sqe {
  uint8_t opcode = 0;
  int fd = -1;
  uint8_t flags = 0;
  uint32_t cmd_op = 0;
  uint64_t user_data = 0;
  uint32_t uring_cmd_flags = 0;
  uint16_t buf_index = 0;
  nvme_uring_cmd cmd{};
};

class FakeContext final : public datapath::ublk::QueueContext {
 public:
  explicit FakeContext(uint16_t depth, int queue_id = 0)
      : depth_(depth), queue_id_(queue_id) {
    io_uring_params p{};
    p.flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32;
    ok_ = io_uring_queue_init_params(8, &ring_, &p) == 0;
  }
  ~FakeContext() override {
    if (ok_) io_uring_queue_exit(&ring_);
  }
  bool ok() const { return ok_; }

  int queue_id() const override { return queue_id_; }
  uint16_t depth() const override { return depth_; }
  io_uring_sqe* GetSqe() override {
    storage_.emplace_back();
    return reinterpret_cast<io_uring_sqe*>(storage_.back().data());
  }
  io_uring* ring() override { return &ring_; }
  void Complete(uint16_t tag, int32_t result) override {
    completed_[tag] = result;
  }
  void Wake() override {}
  // Registered buffers, as the ublk queue answers: [fixed_begin_, fixed_end_)
  // is buffer index 2 (any index would do).
  int FixedBuffer(const std::byte* data, size_t bytes) const override {
    return data >= fixed_begin_ && data + bytes <= fixed_end_ ? 2 : -1;
  }
  const std::byte* fixed_begin_ = nullptr;
  const std::byte* fixed_end_ = nullptr;

  // The SQEs put on the ring since the last call.
  std::vector<Sqe> Drain() {
    std::vector<Sqe> out;
    for (auto& raw : storage_) {
      const auto* s = reinterpret_cast<const io_uring_sqe*>(raw.data());
      Sqe x;
      x.opcode = s->opcode;
      x.fd = s->fd;
      x.flags = s->flags;
      x.cmd_op = s->cmd_op;
      x.user_data = s->user_data;
      x.uring_cmd_flags = s->uring_cmd_flags;
      x.buf_index = s->buf_index;
      std::memcpy(&x.cmd, s->cmd, sizeof(x.cmd));
      out.push_back(x);
    }
    storage_.clear();
    return out;
  }
  std::map<uint16_t, int32_t> completed_;

 private:
  uint16_t depth_;
  int queue_id_;
  io_uring ring_{};
  bool ok_ = false;
  std::deque<std::array<uint8_t, 128>> storage_;
};

}  // namespace pathwise::testing_util

#endif  // PATHWISE_TESTS_UNIT_DATAPATH_FAKE_QUEUE_CONTEXT_H_

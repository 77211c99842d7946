// SPDX-License-Identifier: Apache-2.0
// One ublk queue: its thread's io_uring (shared with the backend), the
// queue's io descriptors mapped from /dev/ublkcN, one buffer per tag, and
// the loop that turns CQEs into QueueCore events.
#ifndef PATHWISE_DATAPATH_UBLK_QUEUE_H_
#define PATHWISE_DATAPATH_UBLK_QUEUE_H_

#include <liburing.h>
#include <sched.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "datapath/ublk/backend.h"
#include "datapath/ublk/queue_core.h"

namespace pathwise::datapath::ublk {

struct QueueConfig {
  int char_fd = -1;
  uint16_t queue_id = 0;
  uint16_t depth = 0;
  uint32_t buffer_bytes = 0;
  bool ioctl_encoded = true;
  Geometry geometry;
  absl::Duration abort_grace = absl::Seconds(5);
  // The CPUs blk-mq maps to this queue (GET_QUEUE_AFFINITY): the queue's
  // thread runs only there. Empty: not pinned.
  std::optional<cpu_set_t> cpus;
};

class Queue final : public QueueContext, private CommandSink {
 public:
  Queue(const QueueConfig& config, Backend& backend);
  ~Queue() override;
  Queue(const Queue&) = delete;
  Queue& operator=(const Queue&) = delete;

  // On the queue's thread: ring, descriptor mapping, buffers, the backend's
  // half, FETCH on every tag (submitted before this returns, so that
  // START_DEV can complete).
  absl::Status Setup();
  // On the queue's thread, after Setup: serves until every tag is aborted
  // by the kernel (after STOP_DEV), or the shutdown deadline passes.
  void Run();
  // Any thread: starts the shutdown grace period.
  void RequestStop();

  QueueCounters counters() const;
  // After Setup: the io_uring setup flags the kernel accepted (the
  // IORING_SETUP_* task-run flags are dropped one by one on kernels that
  // refuse them), and whether the thread is pinned to config().cpus.
  unsigned ring_flags() const { return ring_flags_; }
  bool pinned() const { return pinned_; }

  // QueueContext
  int queue_id() const override { return config_.queue_id; }
  uint16_t depth() const override { return config_.depth; }
  io_uring_sqe* GetSqe() override;
  io_uring* ring() override { return &ring_; }
  void Complete(uint16_t tag, int32_t result) override;
  void Wake() override;
  int FixedBuffer(const std::byte* data, size_t bytes) const override;

 private:
  // CommandSink
  void Fetch(uint16_t tag, std::byte* buffer) override;
  void Commit(uint16_t tag, int32_t result, std::byte* buffer) override;
  void IoCommand(uint32_t op, uint16_t tag, int32_t result, std::byte* buffer);

  std::byte* NewBuffer();
  void ArmEventRead();
  void HandleCqe(const io_uring_cqe& cqe);

  const QueueConfig config_;
  Backend& backend_;
  io_uring ring_{};
  bool ring_ready_ = false;
  bool sqe128_ = false;
  unsigned ring_flags_ = 0;
  bool pinned_ = false;
  int event_fd_ = -1;
  uint64_t event_value_ = 0;
  bool event_armed_ = false;
  bool woken_ = false;
  const ublksrv_io_desc* iods_ = nullptr;
  size_t iod_bytes_ = 0;
  std::byte* buffers_ = nullptr;
  size_t buffers_bytes_ = 0;
  bool buffers_registered_ = false;
  std::vector<std::byte*> spare_buffers_;
  std::unique_ptr<QueueCore> core_;
  std::unique_ptr<QueueBackend> queue_backend_;
  std::atomic<bool> stop_requested_{false};
  // Copied out of the loop for counters() (read after the thread joined).
  QueueCounters final_counters_;
};

}  // namespace pathwise::datapath::ublk

#endif  // PATHWISE_DATAPATH_UBLK_QUEUE_H_

// SPDX-License-Identifier: Apache-2.0
#include "datapath/ublk/queue.h"

#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "datapath/ublk/params.h"

namespace pathwise::datapath::ublk {
namespace {

// user_data of the queue's own eventfd read; ublk commands carry their tag
// (< 2^16), backend CQEs have QueueContext::kBackendBit.
constexpr uint64_t kEventUserData = uint64_t{1} << 62;

unsigned RingEntries(uint16_t depth, unsigned sqes_per_request) {
  const unsigned want = depth * (1 + std::max(1u, sqes_per_request)) + 2;
  unsigned n = 8;
  while (n < want && n < 32768) n <<= 1;
  return n;
}

}  // namespace

Queue::Queue(const QueueConfig& config, Backend& backend)
    : config_(config), backend_(backend) {}

Queue::~Queue() {
  // The backend's half may hold SQEs or registrations on the ring.
  queue_backend_.reset();
  core_.reset();
  if (ring_ready_) io_uring_queue_exit(&ring_);
  if (iods_ != nullptr) {
    munmap(const_cast<ublksrv_io_desc*>(iods_), iod_bytes_);
  }
  if (buffers_ != nullptr) munmap(buffers_, buffers_bytes_);
  for (std::byte* b : spare_buffers_) munmap(b, config_.buffer_bytes);
  if (event_fd_ >= 0) close(event_fd_);
}

absl::Status Queue::Setup() {
  if (config_.cpus.has_value()) {
    // blk-mq runs ublk_queue_rq on these CPUs, which hands each request to
    // this thread as task work; here that is a wake-up on the same CPU
    // instead of an IPI to another, and the backend's commands go out on
    // the same CPU's queues, as the application's own I/O would. Refused
    // (a cpuset without those CPUs): the thread stays where it may run.
    pinned_ = sched_setaffinity(0, sizeof(cpu_set_t), &*config_.cpus) == 0;
  }
  const RingNeeds needs = backend_.ring_needs();
  sqe128_ = needs.sqe128;
  unsigned base = 0;
  if (needs.sqe128) base |= IORING_SETUP_SQE128;
  if (needs.cqe32) base |= IORING_SETUP_CQE32;
  const unsigned entries = RingEntries(config_.depth, needs.sqes_per_request);
  // Task work (the kernel handing us requests and passthru completions)
  // runs only when this thread enters io_uring to wait, in one batch with
  // the submissions of that io_uring_enter: no interruption per completion,
  // no IPI to run it, and ublk's recommended setup. A kernel that refuses a
  // flag (EINVAL) gets the next set: DEFER_TASKRUN is 6.1, SINGLE_ISSUER
  // 6.0, COOP_TASKRUN 5.19.
  constexpr unsigned kTaskRunFlags[] = {
      IORING_SETUP_COOP_TASKRUN | IORING_SETUP_SINGLE_ISSUER |
          IORING_SETUP_DEFER_TASKRUN,
      IORING_SETUP_COOP_TASKRUN | IORING_SETUP_SINGLE_ISSUER,
      IORING_SETUP_COOP_TASKRUN,
      0,
  };
  int r = -EINVAL;
  for (const unsigned extra : kTaskRunFlags) {
    io_uring_params p{};
    p.flags = base | extra;
    r = io_uring_queue_init_params(entries, &ring_, &p);
    if (r != -EINVAL) {
      ring_flags_ = p.flags;
      break;
    }
  }
  if (r < 0) return absl::ErrnoToStatus(-r, "queue io_uring");
  ring_ready_ = true;
  // The loop's io_uring_enter then skips the ring's file lookup (5.18);
  // refused: the plain fd, as before.
  (void)io_uring_register_ring_fd(&ring_);

  event_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (event_fd_ < 0) return absl::ErrnoToStatus(errno, "eventfd");

  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  iod_bytes_ = IodAreaBytes(config_.depth, page);
  void* iods = mmap(nullptr, iod_bytes_, PROT_READ, MAP_SHARED | MAP_POPULATE,
                    config_.char_fd, IodAreaOffset(config_.queue_id, page));
  if (iods == MAP_FAILED) {
    return absl::ErrnoToStatus(
        errno,
        absl::StrCat("mmap of queue ", config_.queue_id, "'s io descriptors"));
  }
  iods_ = static_cast<const ublksrv_io_desc*>(iods);

  buffers_bytes_ = size_t{config_.depth} * config_.buffer_bytes;
  void* bufs = mmap(nullptr, buffers_bytes_, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (bufs == MAP_FAILED) return absl::ErrnoToStatus(errno, "I/O buffers");
  buffers_ = static_cast<std::byte*>(bufs);
  if (needs.fixed_buffers) {
    // One registration for the whole area: a fixed buffer may be used at
    // any offset inside it. Refused (memlock limit, no memory): the backend
    // maps each I/O's pages itself, as without.
    const iovec area{.iov_base = buffers_, .iov_len = buffers_bytes_};
    buffers_registered_ = io_uring_register_buffers(&ring_, &area, 1) == 0;
  }
  std::vector<std::byte*> per_tag(config_.depth);
  for (uint16_t t = 0; t < config_.depth; ++t) {
    per_tag[t] = buffers_ + size_t{t} * config_.buffer_bytes;
  }
  core_ = std::make_unique<QueueCore>(
      config_.depth, config_.buffer_bytes, config_.geometry,
      static_cast<CommandSink&>(*this), std::move(per_tag),
      [this] { return NewBuffer(); });

  auto attached = backend_.AttachQueue(*this);
  if (!attached.ok()) return attached.status();
  queue_backend_ = *std::move(attached);
  core_->set_backend(queue_backend_.get());

  ArmEventRead();
  core_->Start();
  r = io_uring_submit(&ring_);
  if (r < 0) return absl::ErrnoToStatus(-r, "submitting FETCH_REQ");
  // A refused FETCH completes at once; START_DEV would wait forever for it.
  io_uring_cqe* cqe = nullptr;
  while (io_uring_peek_cqe(&ring_, &cqe) == 0 && cqe != nullptr) {
    const io_uring_cqe copy = *cqe;
    io_uring_cqe_seen(&ring_, cqe);
    if ((copy.user_data & (kEventUserData | kBackendBit)) == 0) {
      return absl::ErrnoToStatus(
          -copy.res, absl::StrCat("FETCH_REQ on queue ", config_.queue_id,
                                  " tag ", copy.user_data));
    }
    HandleCqe(copy);
  }
  return absl::OkStatus();
}

std::byte* Queue::NewBuffer() {
  void* b = mmap(nullptr, config_.buffer_bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (b == MAP_FAILED) return nullptr;
  spare_buffers_.push_back(static_cast<std::byte*>(b));
  return spare_buffers_.back();
}

io_uring_sqe* Queue::GetSqe() {
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  if (sqe == nullptr) {
    io_uring_submit(&ring_);
    sqe = io_uring_get_sqe(&ring_);
  }
  if (sqe != nullptr) std::memset(sqe, 0, (sqe128_ ? 2 : 1) * sizeof(*sqe));
  return sqe;
}

void Queue::ArmEventRead() {
  if (event_armed_) return;
  io_uring_sqe* sqe = GetSqe();
  if (sqe == nullptr) return;
  io_uring_prep_read(sqe, event_fd_, &event_value_, sizeof(event_value_), 0);
  sqe->user_data = kEventUserData;
  event_armed_ = true;
}

void Queue::IoCommand(uint32_t op, uint16_t tag, int32_t result,
                      std::byte* buffer) {
  io_uring_sqe* sqe = GetSqe();
  if (sqe == nullptr) return;
  sqe->opcode = IORING_OP_URING_CMD;
  sqe->fd = config_.char_fd;
  sqe->cmd_op = op;
  auto* cmd = reinterpret_cast<ublksrv_io_cmd*>(sqe->cmd);
  cmd->q_id = config_.queue_id;
  cmd->tag = tag;
  cmd->result = result;
  cmd->addr = reinterpret_cast<uintptr_t>(buffer);
  sqe->user_data = tag;
}

void Queue::Fetch(uint16_t tag, std::byte* buffer) {
  IoCommand(FetchOpcode(config_.ioctl_encoded), tag, 0, buffer);
}

void Queue::Commit(uint16_t tag, int32_t result, std::byte* buffer) {
  IoCommand(CommitOpcode(config_.ioctl_encoded), tag, result, buffer);
}

void Queue::Complete(uint16_t tag, int32_t result) {
  core_->Complete(tag, result);
}

int Queue::FixedBuffer(const std::byte* data, size_t bytes) const {
  if (!buffers_registered_ || data < buffers_ ||
      data + bytes > buffers_ + buffers_bytes_) {
    return -1;
  }
  return 0;
}

void Queue::Wake() {
  const uint64_t one = 1;
  // EAGAIN only when the counter is saturated: a wake-up is pending anyway.
  (void)!write(event_fd_, &one, sizeof(one));
}

void Queue::RequestStop() {
  stop_requested_.store(true, std::memory_order_release);
  Wake();
}

void Queue::HandleCqe(const io_uring_cqe& cqe) {
  if (cqe.user_data & kBackendBit) {
    if (queue_backend_) queue_backend_->OnCqe(cqe);
    return;
  }
  if (cqe.user_data == kEventUserData) {
    event_armed_ = false;
    woken_ = true;
    if (!core_->Finished()) ArmEventRead();
    return;
  }
  const auto tag = static_cast<uint16_t>(cqe.user_data);
  ublksrv_io_desc iod{};
  if (tag < config_.depth) iod = iods_[tag];
  core_->OnCommandDone(tag, cqe.res, iod);
}

void Queue::Run() {
  absl::Time deadline = absl::InfiniteFuture();
  while (!core_->Finished()) {
    const absl::Time now = absl::Now();
    if (!core_->stopping() && stop_requested_.load(std::memory_order_acquire)) {
      core_->BeginStop(now, config_.abort_grace);
      // The kernel aborts every tag once STOP_DEV has removed the disk; if
      // it has not by then, closing the ring cancels what is left.
      deadline = now + config_.abort_grace + absl::Seconds(5);
    }
    if (core_->stopping()) {
      core_->Tick(now);
      if (now >= deadline) break;
    }
    io_uring_cqe* cqe = nullptr;
    __kernel_timespec ts{.tv_sec = 0, .tv_nsec = 100 * 1000 * 1000};
    const int r = io_uring_submit_and_wait_timeout(
        &ring_, &cqe, 1, core_->stopping() ? &ts : nullptr, nullptr);
    if (r < 0 && r != -ETIME && r != -EINTR && r != -EAGAIN && r != -EBUSY) {
      break;
    }
    unsigned head = 0;
    unsigned seen = 0;
    io_uring_for_each_cqe(&ring_, head, cqe) {
      HandleCqe(*cqe);
      ++seen;
    }
    io_uring_cq_advance(&ring_, seen);
    if (woken_ || core_->in_backend() > 0) {
      woken_ = false;
      if (queue_backend_) queue_backend_->Poll();
    }
    if (queue_backend_) queue_backend_->EndTurn();
  }
  io_uring_submit(&ring_);
  final_counters_ = core_->counters();
}

QueueCounters Queue::counters() const { return final_counters_; }

}  // namespace pathwise::datapath::ublk

// SPDX-License-Identifier: Apache-2.0
#include "nvme/uring.h"

#include <liburing.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace pathwise::nvme {

struct AdminRing::Impl {
  io_uring ring;
};

namespace {

absl::Status ErrnoStatus(int err, absl::string_view what) {
  return absl::Status(absl::ErrnoToStatusCode(err),
                      absl::StrCat(what, ": ", std::strerror(err)));
}

// A free SQE, submitting what is queued first when the ring is full.
io_uring_sqe* GetSqe(io_uring* ring) {
  io_uring_sqe* sqe = io_uring_get_sqe(ring);
  if (sqe == nullptr) {
    io_uring_submit(ring);
    sqe = io_uring_get_sqe(ring);
  }
  return sqe;
}

// Hands what is queued to the kernel. A failed io_uring_enter() leaves the
// queued entries in the ring (liburing has already published them), and
// the next submission or Wait sends them: a command whose enter failed is
// still in flight for its caller, who must keep its buffer until its
// completion. So the failure is not the command's.
void Submit(io_uring* ring) { (void)io_uring_submit(ring); }

}  // namespace

AdminRing::AdminRing(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

AdminRing::~AdminRing() { io_uring_queue_exit(&impl_->ring); }

absl::StatusOr<std::unique_ptr<AdminRing>> AdminRing::Create(unsigned entries) {
  auto impl = std::make_unique<Impl>();
  const int rc = io_uring_queue_init(entries, &impl->ring,
                                     IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
  if (rc < 0) return ErrnoStatus(-rc, "io_uring_setup (SQE128|CQE32)");
  return std::unique_ptr<AdminRing>(new AdminRing(std::move(impl)));
}

absl::Status AdminRing::SubmitAdmin(int fd, const nvme_uring_cmd& cmd,
                                    uint64_t tag) {
  io_uring_sqe* sqe = GetSqe(&impl_->ring);
  if (sqe == nullptr) return absl::ResourceExhaustedError("io_uring full");
  // A 128-byte SQE: the command lives in the 80 bytes from `cmd` on.
  std::memset(sqe, 0, 2 * sizeof(*sqe));
  sqe->opcode = IORING_OP_URING_CMD;
  sqe->fd = fd;
  sqe->cmd_op = NVME_URING_CMD_ADMIN;
  static_assert(sizeof(nvme_uring_cmd) <= 80);
  std::memcpy(sqe->cmd, &cmd, sizeof(cmd));
  io_uring_sqe_set_data64(sqe, tag);
  Submit(&impl_->ring);
  return absl::OkStatus();
}

absl::Status AdminRing::SubmitRead(int fd, uint64_t* buf, uint64_t tag) {
  io_uring_sqe* sqe = GetSqe(&impl_->ring);
  if (sqe == nullptr) return absl::ResourceExhaustedError("io_uring full");
  io_uring_prep_read(sqe, fd, buf, sizeof(*buf), 0);
  io_uring_sqe_set_data64(sqe, tag);
  Submit(&impl_->ring);
  return absl::OkStatus();
}

absl::Status AdminRing::SubmitNop(uint64_t tag) {
  io_uring_sqe* sqe = GetSqe(&impl_->ring);
  if (sqe == nullptr) return absl::ResourceExhaustedError("io_uring full");
  io_uring_prep_nop(sqe);
  io_uring_sqe_set_data64(sqe, tag);
  Submit(&impl_->ring);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Completion>> AdminRing::Wait(
    absl::Duration timeout) {
  std::vector<Completion> out;
  io_uring_cqe* cqe = nullptr;
  if (timeout < absl::ZeroDuration()) timeout = absl::ZeroDuration();
  const timespec t = absl::ToTimespec(timeout);
  __kernel_timespec ts{.tv_sec = t.tv_sec, .tv_nsec = t.tv_nsec};
  // Also submits what a failed enter left queued.
  int rc =
      io_uring_submit_and_wait_timeout(&impl_->ring, &cqe, 1, &ts, nullptr);
  if (rc < 0 && rc != -ETIME && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
    return ErrnoStatus(-rc, "io_uring wait");
  }
  while (io_uring_peek_cqe(&impl_->ring, &cqe) == 0) {
    Completion c;
    c.tag = io_uring_cqe_get_data64(cqe);
    c.res = cqe->res;
    // With CQE32 the command's result is in the big CQE's first word.
    c.result = cqe->big_cqe[0];
    out.push_back(c);
    io_uring_cqe_seen(&impl_->ring, cqe);
  }
  // The kernel could not take what is queued and returned without waiting:
  // a short pause, so that a caller that waits in a loop does not spin
  // while that lasts.
  if (out.empty() && (rc == -EAGAIN || rc == -EBUSY)) {
    absl::SleepFor(std::min(timeout, absl::Duration(absl::Milliseconds(1))));
  }
  return out;
}

}  // namespace pathwise::nvme

// SPDX-License-Identifier: Apache-2.0
// An io_uring for NVMe admin passthru: 128-byte SQEs and 32-byte CQEs
// (IORING_SETUP_SQE128 | IORING_SETUP_CQE32, which NVMe passthru
// requires). One thread owns a ring: submissions and waits are not
// thread-safe.
#ifndef PATHWISE_NVME_URING_H_
#define PATHWISE_NVME_URING_H_

#include <linux/nvme_ioctl.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace pathwise::nvme {

// One completion: the submission's tag, `res` (see DecodePassthruResult)
// and, for passthru, the command's result dword(s).
struct Completion {
  uint64_t tag = 0;
  int32_t res = 0;
  uint64_t result = 0;
};

class AdminRing {
 public:
  // A ring of `entries` submission slots. Fails (with the errno) where
  // io_uring is missing or refused (seccomp, kernel.io_uring_disabled) or
  // the kernel lacks SQE128/CQE32 (before 5.19).
  static absl::StatusOr<std::unique_ptr<AdminRing>> Create(unsigned entries);
  ~AdminRing();
  AdminRing(const AdminRing&) = delete;
  AdminRing& operator=(const AdminRing&) = delete;

  // Submits `cmd` as NVME_URING_CMD_ADMIN on `fd` (a controller char
  // device, /dev/nvmeX). An error here means nothing was queued (the ring
  // had no free slot): the caller may free the command's buffer. Once
  // queued, the command is the kernel's: should io_uring_enter() fail (a
  // transient EAGAIN or EBUSY), it stays in the ring and goes with the next
  // submission or Wait, and only its Completion ends it. Errors of the
  // command itself come back as its Completion.
  absl::Status SubmitAdmin(int fd, const nvme_uring_cmd& cmd, uint64_t tag);
  // Submits an 8-byte read of `fd` into `*buf` (an eventfd: a way for
  // another thread to end a Wait early).
  absl::Status SubmitRead(int fd, uint64_t* buf, uint64_t tag);
  // Submits a no-op (completes at once with res 0).
  absl::Status SubmitNop(uint64_t tag);

  // Submits whatever is still queued, waits up to `timeout` for a
  // completion, then returns every completion that is ready (none when the
  // timeout passed first).
  absl::StatusOr<std::vector<Completion>> Wait(absl::Duration timeout);

 private:
  struct Impl;
  explicit AdminRing(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace pathwise::nvme

#endif  // PATHWISE_NVME_URING_H_

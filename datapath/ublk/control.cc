// SPDX-License-Identifier: Apache-2.0
#include "datapath/ublk/control.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "datapath/ublk/params.h"

namespace pathwise::datapath::ublk {
namespace {

absl::Status Errno(int err, const std::string& what) {
  return absl::ErrnoToStatus(err, what);
}

}  // namespace

absl::StatusOr<std::unique_ptr<ControlDevice>> ControlDevice::Open(
    const std::string& path) {
  std::unique_ptr<ControlDevice> c(new ControlDevice());
  c->fd_ = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (c->fd_ < 0) {
    const int err = errno;
    if (err == ENOENT || err == ENXIO || err == ENODEV) {
      return absl::FailedPreconditionError(kNoUblkMessage);
    }
    return Errno(err, absl::StrCat("cannot open ", path,
                                   err == EACCES || err == EPERM
                                       ? " (needs CAP_SYS_ADMIN)"
                                       : ""));
  }
  const int r = io_uring_queue_init(4, &c->ring_, IORING_SETUP_SQE128);
  if (r < 0) {
    return Errno(-r, "io_uring with 128-byte SQEs (needs Linux >= 5.19)");
  }
  c->ring_ready_ = true;
  // GET_FEATURES exists only in the ioctl-encoded form (6.5+); where it is
  // refused, the legacy opcodes are the only ones the kernel knows.
  uint64_t features = 0;
  c->ioctl_encoded_ = true;
  auto got =
      c->Command(UBLK_U_CMD_GET_FEATURES, "GET_FEATURES", 0,
                 reinterpret_cast<uintptr_t>(&features), UBLK_FEATURES_LEN, 0);
  if (got.ok()) {
    c->features_ = features;
  } else {
    c->ioctl_encoded_ = false;
  }
  return c;
}

ControlDevice::~ControlDevice() {
  if (ring_ready_) io_uring_queue_exit(&ring_);
  if (fd_ >= 0) close(fd_);
}

absl::StatusOr<int> ControlDevice::Command(uint32_t legacy_nr, const char* what,
                                           uint32_t dev_id, uint64_t addr,
                                           uint16_t len, uint64_t data0) {
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  if (sqe == nullptr) return absl::InternalError("control ring full");
  std::memset(sqe, 0, 2 * sizeof(*sqe));
  sqe->opcode = IORING_OP_URING_CMD;
  sqe->fd = fd_;
  // GET_FEATURES is passed already encoded.
  sqe->cmd_op =
      legacy_nr > 0xff ? legacy_nr : ControlOpcode(legacy_nr, ioctl_encoded_);
  auto* cmd = reinterpret_cast<ublksrv_ctrl_cmd*>(sqe->cmd);
  cmd->dev_id = dev_id;
  cmd->queue_id = static_cast<uint16_t>(-1);
  cmd->addr = addr;
  cmd->len = len;
  cmd->data[0] = data0;
  const uint64_t tag = ++last_tag_;
  io_uring_sqe_set_data64(sqe, tag);
  return Send(sqe, tag, what);
}

// The kernel takes a queued entry only inside io_uring_enter(). An enter
// that fails (EAGAIN when the kernel cannot allocate, EBUSY while its
// completion queue overflows) leaves the entry queued, to go with the next
// enter; and the command points at the caller's buffer. So a refused
// command is retried for a while, and then, still queued, turned into a
// no-op before this returns: no later command sends it with a buffer that
// is gone. Its completion, and any other stale one, is skipped by its tag.
absl::StatusOr<int> ControlDevice::Send(io_uring_sqe* sqe, uint64_t tag,
                                        const char* what) {
  constexpr absl::Duration kRefusedFor = absl::Seconds(2);
  const absl::Time deadline = absl::Now() + kRefusedFor;
  while (true) {
    const int r = io_uring_submit_and_wait(&ring_, 1);
    if (r < 0) {
      const bool queued = io_uring_sq_ready(&ring_) > 0;
      const bool transient = r == -EINTR || r == -EAGAIN || r == -EBUSY;
      if (transient && (absl::Now() < deadline || !queued)) {
        if (r != -EINTR) absl::SleepFor(absl::Milliseconds(1));
        continue;
      }
      if (queued) {
        io_uring_prep_nop(sqe);
        io_uring_sqe_set_data64(sqe, tag);
      }
      return Errno(
          -r, absl::StrCat("ublk ", what,
                           queued ? ": refused by io_uring_enter" : ": wait"));
    }
    io_uring_cqe* cqe = nullptr;
    while (io_uring_peek_cqe(&ring_, &cqe) == 0) {
      const bool mine = cqe->user_data == tag;
      const int res = cqe->res;
      io_uring_cqe_seen(&ring_, cqe);
      if (!mine) continue;
      if (res < 0) return Errno(-res, absl::StrCat("ublk ", what));
      return res;
    }
  }
}

absl::Status ControlDevice::AddDev(ublksrv_ctrl_dev_info* info) {
  return Command(UBLK_CMD_ADD_DEV, "ADD_DEV", info->dev_id,
                 reinterpret_cast<uintptr_t>(info), sizeof(*info), 0)
      .status();
}

absl::Status ControlDevice::SetParams(uint32_t dev_id, ublk_params* params) {
  return Command(UBLK_CMD_SET_PARAMS, "SET_PARAMS", dev_id,
                 reinterpret_cast<uintptr_t>(params), sizeof(*params), 0)
      .status();
}

absl::StatusOr<cpu_set_t> ControlDevice::GetQueueAffinity(uint32_t dev_id,
                                                          uint16_t queue) {
  // cpu_set_t's 1024 bits: the kernel refuses a mask shorter than its
  // nr_cpu_ids, and the caller then leaves the thread unpinned.
  cpu_set_t set;
  CPU_ZERO(&set);
  auto r = Command(UBLK_CMD_GET_QUEUE_AFFINITY, "GET_QUEUE_AFFINITY", dev_id,
                   reinterpret_cast<uintptr_t>(&set), sizeof(set), queue);
  if (!r.ok()) return r.status();
  return set;
}

absl::Status ControlDevice::StartDev(uint32_t dev_id, int32_t server_pid) {
  return Command(UBLK_CMD_START_DEV, "START_DEV", dev_id, 0, 0,
                 static_cast<uint64_t>(server_pid))
      .status();
}

absl::Status ControlDevice::GetDevInfo(uint32_t dev_id,
                                       ublksrv_ctrl_dev_info* info) {
  return Command(UBLK_CMD_GET_DEV_INFO, "GET_DEV_INFO", dev_id,
                 reinterpret_cast<uintptr_t>(info), sizeof(*info), 0)
      .status();
}

absl::Status ControlDevice::StartUserRecovery(uint32_t dev_id) {
  return Command(UBLK_CMD_START_USER_RECOVERY, "START_USER_RECOVERY", dev_id, 0,
                 0, 0)
      .status();
}

absl::Status ControlDevice::EndUserRecovery(uint32_t dev_id,
                                            int32_t server_pid) {
  return Command(UBLK_CMD_END_USER_RECOVERY, "END_USER_RECOVERY", dev_id, 0, 0,
                 static_cast<uint64_t>(server_pid))
      .status();
}

absl::Status ControlDevice::StopDev(uint32_t dev_id) {
  return Command(UBLK_CMD_STOP_DEV, "STOP_DEV", dev_id, 0, 0, 0).status();
}

absl::Status ControlDevice::DelDev(uint32_t dev_id) {
  return Command(UBLK_CMD_DEL_DEV, "DEL_DEV", dev_id, 0, 0, 0).status();
}

}  // namespace pathwise::datapath::ublk

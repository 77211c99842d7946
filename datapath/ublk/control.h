// SPDX-License-Identifier: Apache-2.0
// /dev/ublk-control: the device lifecycle commands, each an io_uring
// URING_CMD on an SQE128 ring, waited for one at a time.
#ifndef PATHWISE_DATAPATH_UBLK_CONTROL_H_
#define PATHWISE_DATAPATH_UBLK_CONTROL_H_

#include <liburing.h>
#include <sched.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "datapath/ublk/uapi.h"

namespace pathwise::datapath::ublk {

// The one line for a kernel without ublk_drv.
inline constexpr char kNoUblkMessage[] =
    "ublk_drv is not loaded; the datapath needs Linux >= 6.1 with "
    "CONFIG_BLK_DEV_UBLK (modprobe ublk_drv)";

class ControlDevice {
 public:
  // Opens the control device and probes the opcode form. A missing device
  // is FailedPrecondition with kNoUblkMessage.
  static absl::StatusOr<std::unique_ptr<ControlDevice>> Open(
      const std::string& path);
  ~ControlDevice();
  ControlDevice(const ControlDevice&) = delete;
  ControlDevice& operator=(const ControlDevice&) = delete;

  bool ioctl_encoded() const { return ioctl_encoded_; }
  // GET_FEATURES's answer; 0 on kernels before 6.5.
  uint64_t features() const { return features_; }

  // ADD_DEV: info in, the kernel's accepted info (id, queues, sizes) out.
  absl::Status AddDev(ublksrv_ctrl_dev_info* info);
  absl::Status SetParams(uint32_t dev_id, ublk_params* params);
  // GET_QUEUE_AFFINITY (after ADD_DEV): the CPUs whose I/O blk-mq sends
  // to `queue`, i.e. where ublk_queue_rq runs and hands the request to the
  // queue's thread.
  absl::StatusOr<cpu_set_t> GetQueueAffinity(uint32_t dev_id, uint16_t queue);
  // Blocks until every queue has fetched all its tags.
  absl::Status StartDev(uint32_t dev_id, int32_t server_pid);
  absl::Status StopDev(uint32_t dev_id);
  absl::Status GetDevInfo(uint32_t dev_id, ublksrv_ctrl_dev_info* info);
  // Recovery of a device whose server died (UBLK_F_USER_RECOVERY): START
  // before the new server's queues fetch, END (with its pid) once they do.
  absl::Status StartUserRecovery(uint32_t dev_id);
  absl::Status EndUserRecovery(uint32_t dev_id, int32_t server_pid);
  absl::Status DelDev(uint32_t dev_id);

 private:
  ControlDevice() = default;
  // One command; the CQE's result (>= 0) or an error naming `what`.
  absl::StatusOr<int> Command(uint32_t legacy_nr, const char* what,
                              uint32_t dev_id, uint64_t addr, uint16_t len,
                              uint64_t data0);
  // Sends the queued `sqe` (tagged `tag`) and waits for its completion.
  absl::StatusOr<int> Send(io_uring_sqe* sqe, uint64_t tag, const char* what);

  int fd_ = -1;
  io_uring ring_{};
  bool ring_ready_ = false;
  uint64_t last_tag_ = 0;  // each command's user_data
  bool ioctl_encoded_ = false;
  uint64_t features_ = 0;
};

}  // namespace pathwise::datapath::ublk

#endif  // PATHWISE_DATAPATH_UBLK_CONTROL_H_

// SPDX-License-Identifier: Apache-2.0
// A ublk block device served by a Backend: /dev/ublkbN from Create() until
// Stop() (or destruction), with no device left behind on any path out.
//
// Features used, and since when the kernel has them:
//   - the default copy mode: for a write the kernel copies the request's
//     pages into the tag's buffer before handing the request over, for a
//     read it copies the buffer back at commit (6.1). A passthru backend
//     transfers straight to and from those buffers, so there is one copy
//     per request. UBLK_F_USER_COPY (6.5) would move the same copy into a
//     pread/pwrite on /dev/ublkcN per request, and zero copy with registered
//     buffers (UBLK_F_AUTO_BUF_REG, 6.16) is not in the 6.12 testbed kernel.
//   - one io_uring per queue, COOP_TASKRUN + SINGLE_ISSUER + DEFER_TASKRUN
//     where available (6.1), shared with the backend (SQE128/CQE32 on demand
//     for NVMe passthru, 5.19).
//   - UBLK_F_USER_RECOVERY with _REISSUE when DeviceOptions::user_recovery
//     is set (6.0): when the server dies the kernel keeps the disk and
//     holds its I/O, requests the dead server had taken included, until a
//     new server recovers the device (recover_dev_id); without it the
//     kernel fails outstanding I/O and removes the disk.
//
// Shutdown (Stop): every queue starts its grace period; STOP_DEV removes
// the disk (the kernel waits for requests in flight, which the queues keep
// serving, and a backend that holds one past the grace gets it failed with
// EIO for it); the kernel then aborts every queue's commands, the queue
// threads end, the char device is closed and DEL_DEV removes the device.
#ifndef PATHWISE_DATAPATH_UBLK_DEVICE_H_
#define PATHWISE_DATAPATH_UBLK_DEVICE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "datapath/ublk/backend.h"
#include "datapath/ublk/control.h"
#include "datapath/ublk/params.h"
#include "datapath/ublk/queue.h"

namespace pathwise::datapath::ublk {

class Device {
 public:
  // Adds, configures and starts the device. The backend must outlive it.
  static absl::StatusOr<std::unique_ptr<Device>> Create(
      const DeviceOptions& options, Backend& backend);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  uint32_t id() const { return info_.dev_id; }
  std::string block_path() const;
  std::string char_path() const;
  uint16_t queues() const { return info_.nr_hw_queues; }
  uint16_t depth() const { return info_.queue_depth; }
  bool ioctl_encoded() const { return control_->ioctl_encoded(); }
  // The disk's I/O scheduler in effect after Create(), and why it is not
  // the one asked for when setting it failed (the device serves anyway).
  const std::string& scheduler() const { return scheduler_; }
  const absl::Status& scheduler_status() const { return scheduler_status_; }

  // Removes the device; idempotent. The first error is returned, but every
  // step runs.
  absl::Status Stop();

  // Summed over the queues; complete after Stop().
  QueueCounters counters() const;

 private:
  Device(const DeviceOptions& options, Backend& backend,
         std::unique_ptr<ControlDevice> control);
  absl::Status Start();
  absl::Status Recover();
  absl::Status StartQueues();
  void ApplyScheduler();
  // STOP_DEV, join the queues, close the char device, DEL_DEV.
  absl::Status Teardown();

  const DeviceOptions options_;
  Backend& backend_;
  std::unique_ptr<ControlDevice> control_;
  ublksrv_ctrl_dev_info info_{};
  bool added_ = false;
  bool stopped_ = false;
  int char_fd_ = -1;
  std::string scheduler_;
  absl::Status scheduler_status_;
  std::vector<std::unique_ptr<Queue>> queues_;
  std::vector<std::thread> threads_;
  std::vector<QueueCounters> final_counters_;
};

}  // namespace pathwise::datapath::ublk

#endif  // PATHWISE_DATAPATH_UBLK_DEVICE_H_

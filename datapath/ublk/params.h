// SPDX-License-Identifier: Apache-2.0
// Pure pieces of the ublk front end, kept apart from the io_uring plumbing
// so that they are unit-tested on a host without ublk_drv: device options
// and their checks, the ADD_DEV and SET_PARAMS payloads, the io descriptor
// area's layout, opcode encoding and io descriptor decoding.
#ifndef PATHWISE_DATAPATH_UBLK_PARAMS_H_
#define PATHWISE_DATAPATH_UBLK_PARAMS_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "datapath/ublk/backend.h"
#include "datapath/ublk/uapi.h"

namespace pathwise::datapath::ublk {

struct DeviceOptions {
  std::string control_path = "/dev/ublk-control";
  // Where /dev/ublkcN appears (devtmpfs creates it on ADD_DEV).
  std::string dev_dir = "/dev";
  uint16_t queues = 1;
  uint16_t depth = 64;
  // Largest request, and the size of each tag's buffer.
  uint32_t max_io_bytes = 512 * 1024;
  // At shutdown, how long requests held by the backend may take before the
  // front end fails them with EIO so that the device can go away.
  absl::Duration abort_grace = absl::Seconds(5);
  // How long to wait for /dev/ublkcN to appear after ADD_DEV.
  absl::Duration char_dev_timeout = absl::Seconds(5);
  // The disk's I/O scheduler, set after START_DEV (scheduler.h);
  // kKernelScheduler ("kernel") leaves blk-mq's default.
  std::string scheduler = "none";
  // Where the disk's queue attributes are (tests use another tree).
  std::string sysfs_root = "/sys";
  // UBLK_F_USER_RECOVERY with _REISSUE: when the server dies the kernel
  // keeps the disk and holds its I/O (requests the dead server had taken
  // are issued again) until a new server recovers it.
  bool user_recovery = false;
  // >= 0: take over this device, which a dead server left waiting for
  // recovery, instead of adding one (its queues and depth are the
  // kernel's record of it).
  int recover_dev_id = -1;
};

absl::Status ValidateOptions(const DeviceOptions& options,
                             const Geometry& geometry);

// ADD_DEV's payload: a new device with a kernel-chosen id, the default copy
// mode (the kernel copies between the request's pages and our buffers).
ublksrv_ctrl_dev_info BuildDevInfo(const DeviceOptions& options);

// SET_PARAMS's payload for the device the kernel accepted (its max_io_buf
// bytes may be rounded down).
ublk_params BuildParams(const Geometry& geometry, uint32_t max_io_buf_bytes);

// The io descriptor area of one queue: the kernel maps queue q's descriptors
// at offset q * (the area of the largest queue depth) of /dev/ublkcN.
size_t IodAreaBytes(uint16_t depth, size_t page_size);
off_t IodAreaOffset(uint16_t queue, size_t page_size);

// Control and I/O opcodes, ioctl-encoded (6.5+) or legacy.
uint32_t ControlOpcode(uint32_t legacy_nr, bool ioctl_encoded);
uint32_t FetchOpcode(bool ioctl_encoded);
uint32_t CommitOpcode(bool ioctl_encoded);

// An io descriptor from the kernel as a request for the backend. Returns 0,
// or the -errno to fail the request with (unknown op, out of range, larger
// than the tag's buffer). buffer is the tag's buffer (max_io_bytes long).
int DecodeIod(const ublksrv_io_desc& iod, uint16_t tag,
              const Geometry& geometry, std::span<std::byte> buffer,
              IoRequest* out);

}  // namespace pathwise::datapath::ublk

#endif  // PATHWISE_DATAPATH_UBLK_PARAMS_H_

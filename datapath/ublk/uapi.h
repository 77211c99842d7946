// SPDX-License-Identifier: Apache-2.0
// The ublk UAPI this front end uses: <linux/ublk_cmd.h> from the installed
// kernel headers, plus the definitions that Debian bookworm's headers (6.1)
// lack. The missing ones are copied by value from the kernel's
// include/uapi/linux/ublk_cmd.h (a stable ABI); each is defined only when the
// installed header does not already define it.
//
// Kernel versions of what is used here:
//   ublk_drv, ADD/SET_PARAMS/START/STOP/DEL, FETCH/COMMIT_AND_FETCH: 6.1
//     (6.0 had ublk_drv but an older dev_info layout and no SET_PARAMS)
//   ioctl-encoded opcodes (UBLK_U_*), GET_FEATURES: 6.5; before that only
//     the legacy opcodes exist, and kernels built without
//     CONFIG_BLKDEV_UBLK_LEGACY_OPCODES accept only the ioctl-encoded ones,
//     so the opcode form is chosen by probing GET_FEATURES.
//   GET_QUEUE_AFFINITY (the CPUs blk-mq maps to a queue): 6.1
//   UBLK_F_USER_COPY: 6.5 (not used: see device.h).
#ifndef PATHWISE_DATAPATH_UBLK_UAPI_H_
#define PATHWISE_DATAPATH_UBLK_UAPI_H_

#include <linux/ioctl.h>
#include <linux/ublk_cmd.h>

#ifndef UBLK_U_CMD_ADD_DEV
#define UBLK_U_CMD_GET_DEV_INFO \
  _IOR('u', UBLK_CMD_GET_DEV_INFO, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_ADD_DEV _IOWR('u', UBLK_CMD_ADD_DEV, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_DEL_DEV _IOWR('u', UBLK_CMD_DEL_DEV, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_START_DEV \
  _IOWR('u', UBLK_CMD_START_DEV, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_STOP_DEV \
  _IOWR('u', UBLK_CMD_STOP_DEV, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_SET_PARAMS \
  _IOWR('u', UBLK_CMD_SET_PARAMS, struct ublksrv_ctrl_cmd)
#endif
#ifndef UBLK_U_CMD_GET_QUEUE_AFFINITY
#define UBLK_U_CMD_GET_QUEUE_AFFINITY \
  _IOR('u', UBLK_CMD_GET_QUEUE_AFFINITY, struct ublksrv_ctrl_cmd)
#endif
#ifndef UBLK_U_CMD_GET_FEATURES
#define UBLK_U_CMD_GET_FEATURES _IOR('u', 0x13, struct ublksrv_ctrl_cmd)
#endif
#ifndef UBLK_FEATURES_LEN
#define UBLK_FEATURES_LEN 8
#endif
#ifndef UBLK_U_IO_FETCH_REQ
#define UBLK_U_IO_FETCH_REQ _IOWR('u', UBLK_IO_FETCH_REQ, struct ublksrv_io_cmd)
#define UBLK_U_IO_COMMIT_AND_FETCH_REQ \
  _IOWR('u', UBLK_IO_COMMIT_AND_FETCH_REQ, struct ublksrv_io_cmd)
#endif
#ifndef UBLK_F_UNPRIVILEGED_DEV
#define UBLK_F_UNPRIVILEGED_DEV (1UL << 5)
#endif
#ifndef UBLK_F_CMD_IOCTL_ENCODE
#define UBLK_F_CMD_IOCTL_ENCODE (1UL << 6)
#endif
#ifndef UBLK_F_USER_COPY
#define UBLK_F_USER_COPY (1UL << 7)
#endif

static_assert(sizeof(struct ublksrv_ctrl_cmd) == 32);
static_assert(sizeof(struct ublksrv_ctrl_dev_info) == 64);
static_assert(sizeof(struct ublksrv_io_desc) == 24);
static_assert(sizeof(struct ublksrv_io_cmd) == 16);

#endif  // PATHWISE_DATAPATH_UBLK_UAPI_H_

// NVMe admin command builders for io_uring passthru (struct nvme_uring_cmd
// of <linux/nvme_ioctl.h>, sent as NVME_URING_CMD_ADMIN on /dev/nvmeX).
//
// Privileges: the kernel checks each passthru command (nvme_cmd_allowed()
// in drivers/nvme/host/ioctl.c, Linux >= 6.2). On a controller char device
// only Identify with CNS Namespace, I/O Command Set specific Namespace,
// Namespace independent, I/O Command Set specific Controller, or
// Controller is allowed without CAP_SYS_ADMIN, whether the device was
// opened for reading or writing; every other admin command needs
// CAP_SYS_ADMIN. Linux 6.1 and older check CAP_SYS_ADMIN for every
// passthru command. The device node itself is root's (0600) by default.
#ifndef PATHWISE_NVME_ADMIN_H_
#define PATHWISE_NVME_ADMIN_H_

#include <linux/nvme_ioctl.h>

#include <cstdint>

namespace pathwise::nvme {

inline constexpr uint8_t kAdminIdentify = 0x06;
inline constexpr uint8_t kIdentifyCnsController = 0x01;
// Identify data structures are 4 KiB.
inline constexpr uint32_t kIdentifyDataBytes = 4096;

// Identify Controller (CNS 01h) into `data` (kIdentifyDataBytes, which the
// caller keeps alive until the command completes). The probe command: the
// controller itself must answer it (fabrics targets too), it has no side
// effects, and Linux >= 6.2 allows it without CAP_SYS_ADMIN. timeout_ms
// stays 0 (the kernel's admin timeout): a passthru timeout of its own
// would make the kernel recover, i.e. reset, the controller when it
// expires; the prober times probes out in userspace instead.
nvme_uring_cmd IdentifyController(void* data);

}  // namespace pathwise::nvme

#endif  // PATHWISE_NVME_ADMIN_H_

// SPDX-License-Identifier: Apache-2.0
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

inline constexpr uint8_t kAdminGetLogPage = 0x02;
inline constexpr uint8_t kLogPageAna = 0x0c;
// Log Specific Parameter bit 0 of the ANA log page: Return Groups Only.
inline constexpr uint32_t kAnaLspRgo = 1;
// The namespace id that names every namespace, which the ANA log page is
// read with (the kernel's nvme_read_ana_log() too).
inline constexpr uint32_t kNsidAll = 0xffffffff;

// Identify Controller (CNS 01h) into `data` (kIdentifyDataBytes, which the
// caller keeps alive until the command completes). The probe command: the
// controller itself must answer it (fabrics targets too), it has no side
// effects, and Linux >= 6.2 allows it without CAP_SYS_ADMIN. timeout_ms
// stays 0 (the kernel's admin timeout): a passthru timeout of its own
// would make the kernel recover, i.e. reset, the controller when it
// expires; the prober times probes out in userspace instead.
nvme_uring_cmd IdentifyController(void* data);

// Get Log Page, the ANA log page (LID 0Ch), `len` bytes from offset 0 into
// `buf` (which the caller keeps alive until the command completes): NUMD,
// the 0's based number of dwords, split into NUMDL (CDW10 31:16) and NUMDU
// (CDW11 15:0). `len` is a non-zero multiple of 4 (AnaLogBytes in
// nvme/ana_log.h is); anything else is rounded down to whole dwords,
// never over the buffer. `rgo` sets Return Groups Only (LSP bit 0, CDW10
// bit 8): descriptors without namespace ids, a page that is fixed in
// size. RAE stays 0, as the kernel reads it: the read clears an
// outstanding ANA change event. Needs CAP_SYS_ADMIN (see above); timeout_ms
// stays 0 for the reason given for Identify.
nvme_uring_cmd GetLogPageAna(void* buf, uint32_t len, bool rgo);

}  // namespace pathwise::nvme

#endif  // PATHWISE_NVME_ADMIN_H_

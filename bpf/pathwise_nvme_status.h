/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * NVMe status classification shared verbatim by the nvme_complete_rq
 * program and userspace (bpf/status.cc), so that the unit tests
 * test the kernel's code.
 *
 * `status` is nvme_request.status as the kernel stores it: the CQE status
 * field without the phase bit. SC is bits 7:0, SCT bits 10:8; CRD (12:11),
 * More (13) and DNR (14) are not part of the class.
 */
#ifndef PATHWISE_BPF_PATHWISE_NVME_STATUS_H_
#define PATHWISE_BPF_PATHWISE_NVME_STATUS_H_

#include "pathwise_bpf.h"

#if defined(__bpf__)
#define PW_NVME_INLINE static __always_inline
#else
#define PW_NVME_INLINE static inline
#endif

#define PW_NVME_SCT_SC_MASK 0x7ff

/* Index into pw_path_val.nvme_errors of a status with SCT|SC != 0. */
PW_NVME_INLINE __u32 pw_nvme_err_class(__u32 status) {
  switch ((status >> 8) & 7) {
    case 0:
      return PW_NVME_GENERIC;
    case 1:
      return PW_NVME_COMMAND;
    case 2:
      return PW_NVME_MEDIA;
    case 3:
      return PW_NVME_PATH;
    case 7:
      return PW_NVME_VENDOR;
    default:
      return PW_NVME_RESERVED;
  }
}

#endif /* PATHWISE_BPF_PATHWISE_NVME_STATUS_H_ */

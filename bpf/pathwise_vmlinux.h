/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The few kernel-internal types pathwise's BPF programs touch, declared by
 * hand for CO-RE instead of a full bpftool-generated vmlinux.h.
 *
 * Why not a generated vmlinux.h: the build would then depend on the build
 * machine's running kernel (a CI runner or container may have a different
 * kernel, or no /sys/kernel/btf/vmlinux at all), and a committed 3 MB dump
 * of one kernel is unreviewable. CO-RE matches types and fields by name
 * against the *running* kernel's BTF at load time, so a declaration only
 * has to name every field the programs read; field order, offsets and the
 * other members do not matter. preserve_access_index makes every access a
 * relocation, and a field missing on some kernel fails the load loudly
 * instead of reading a wrong offset.
 *
 * Every field below exists under this name in Linux 5.17 through 6.18
 * (rq->rq_disk was removed in 5.17 in favour of rq->q->disk).
 * Flag and enum values are not taken from here: userspace reads them from
 * the running kernel's BTF and passes them in .rodata (bpf/kernel_btf.cc).
 */
#ifndef PATHWISE_BPF_PATHWISE_VMLINUX_H_
#define PATHWISE_BPF_PATHWISE_VMLINUX_H_

#include <linux/bpf.h>
#include <linux/types.h>

typedef _Bool bool;
#define true 1
#define false 0

#pragma clang attribute push(__attribute__((preserve_access_index)), \
                             apply_to = record)

struct gendisk {
  int major;
  int first_minor;
  char disk_name[32]; /* DISK_NAME_LEN */
  __u64 diskseq;      /* since 5.15; read only if the kernel has it */
};

struct bio;

struct request_queue {
  unsigned long queue_flags;
  struct gendisk *disk;
};

struct request {
  struct request_queue *q;
  __u32 cmd_flags;         /* blk_opf_t */
  __u32 rq_flags;          /* req_flags_t */
  unsigned int __data_len; /* bytes left to complete */
  struct bio *bio;
  __u64 io_start_time_ns;
};

#pragma clang attribute pop

#endif /* PATHWISE_BPF_PATHWISE_VMLINUX_H_ */

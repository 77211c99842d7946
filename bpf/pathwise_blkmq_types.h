/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The blk-mq fields the per hardware queue statistics (the `queues` switch
 * of pathwise_block.bpf.c) and the own issue stamps' set index read, declared
 * for CO-RE like pathwise_vmlinux.h, which must be included first. struct
 * request and struct request_queue are declared there; the fields read here are
 * on flavours (___mq), which libbpf relocates against the same kernel types, so
 * that the default programs' view of the kernel stays as it is.
 *
 * Every field exists under this name in Linux 5.17 through 6.18.
 */
#ifndef PATHWISE_BPF_PATHWISE_BLKMQ_TYPES_H_
#define PATHWISE_BPF_PATHWISE_BLKMQ_TYPES_H_

#pragma clang attribute push(__attribute__((preserve_access_index)), \
                             apply_to = record)

/* A hardware context: for NVMe one I/O queue (qid = queue_num + 1). */
struct blk_mq_hw_ctx {
  unsigned int queue_num;
};

/* A software queue: one per CPU; cpu is the CPU that submitted on it. */
struct blk_mq_ctx {
  unsigned int cpu;
};

struct request___mq {
  struct blk_mq_ctx *mq_ctx;
  struct blk_mq_hw_ctx *mq_hctx;
  int tag;          /* driver tag, -1 = none */
  int internal_tag; /* scheduler tag, -1 = no I/O scheduler */
};

struct request_queue___mq {
  unsigned int nr_hw_queues;
};

/* The submitting task's plug, whose cached clock (>= 6.9; 0 = none cached)
 * is what blk_mq_start_request() stamps rq->io_start_time_ns with. */
struct blk_plug {
  unsigned long long cur_ktime;
};

struct task_struct {
  struct blk_plug *plug;
};

#pragma clang attribute pop

#endif /* PATHWISE_BPF_PATHWISE_BLKMQ_TYPES_H_ */

/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Data layout shared by pathwise's BPF programs and userspace: map keys and
 * values, enum indices and histogram layout constants. Plain fixed-width
 * types only, no pointers, so that the same bytes mean the same thing on
 * both sides.
 */
#ifndef PATHWISE_BPF_PATHWISE_BPF_H_
#define PATHWISE_BPF_PATHWISE_BPF_H_

#if !defined(__bpf__)
#include <linux/types.h>
#endif

/*
 * Latency histogram: log-linear over nanoseconds.
 *
 * Bucket 0 holds latencies <= 2^PW_HIST_MIN_SHIFT ns (1.024 us). Every
 * power-of-two octave (2^k, 2^(k+1)] above that, for k in
 * [PW_HIST_MIN_SHIFT, PW_HIST_MAX_SHIFT), is split into PW_HIST_SUB equal
 * sub-buckets. The last finite upper bound is 2^PW_HIST_MAX_SHIFT ns
 * (68.7 s); the final slot is +Inf. Upper bounds are inclusive, as
 * Prometheus' `le` label requires: a latency equal to a bound lands in the
 * bucket of that bound, never in the next one (see pathwise_hist.h).
 */
#define PW_HIST_SUB_BITS 2
#define PW_HIST_SUB (1 << PW_HIST_SUB_BITS)
#define PW_HIST_MIN_SHIFT 10
#define PW_HIST_MAX_SHIFT 36
#define PW_HIST_OCTAVES (PW_HIST_MAX_SHIFT - PW_HIST_MIN_SHIFT)
#define PW_HIST_FINITE (1 + PW_HIST_OCTAVES * PW_HIST_SUB) /* 105 */
#define PW_HIST_BUCKETS (PW_HIST_FINITE + 1)               /* + the +Inf slot */

/* Operation classes, the `op` label. Index into pw_io_key.op. */
enum pw_op {
  PW_OP_READ = 0,
  PW_OP_WRITE = 1,    /* REQ_OP_WRITE, REQ_OP_ZONE_APPEND */
  PW_OP_FLUSH = 2,    /* REQ_OP_FLUSH */
  PW_OP_DISCARD = 3,  /* REQ_OP_DISCARD, REQ_OP_SECURE_ERASE */
  PW_OP_PASSTHRU = 4, /* REQ_OP_DRV_IN, REQ_OP_DRV_OUT (NVMe passthrough) */
  PW_OP_OTHER = 5,    /* REQ_OP_WRITE_ZEROES, zone management, unknown */
  PW_OP_COUNT = 6,
};

/* Number of possible REQ_OP_* values: cmd_flags & REQ_OP_MASK (8 bits). */
#define PW_REQ_OP_SLOTS 256

/* Key of the per-CPU I/O aggregation map. dev is the kernel's dev_t
 * encoding: major << 20 | minor (MINORBITS = 20); seq is the disk's
 * gendisk.diskseq (0 on kernels without it), so that a disk created on a
 * dev_t freed by another (a controller deleted and another created) is a
 * new key and never continues the old disk's counters. */
struct pw_io_key {
  __u32 dev;
  __u32 op; /* enum pw_op */
  __u64 seq;
};

/* One disk instance: the key of pw_path and pw_disk (see pw_io_key). */
struct pw_disk_key {
  __u32 dev;
  __u32 pad; /* zero: keys are hashed as bytes */
  __u64 seq;
};

/* Value of the per-CPU I/O aggregation map, one copy per CPU. */
struct pw_io_val {
  __u64 count;      /* final completions, failovers excluded */
  __u64 bytes;      /* bytes completed (partial completions included) */
  __u64 lat_sum_ns; /* sum of issue->completion latencies of `count` */
  __u64 errors;     /* completions with a non-zero blk_status_t */
  __u64 own_start;  /* of `count`, latencies from pathwise's own issue
                       stamp; the rest used rq->io_start_time_ns */
  __u64 buckets[PW_HIST_BUCKETS]; /* non-cumulative; sum == count */
  /* This CPU's cached pw_hctx_range of the disk (`queues` only): first
   * slot + 1 (0 = not looked up yet) and the number of slots (0 = none). */
  __u32 hctx_base1;
  __u32 hctx_n;
};

/* Per hardware queue statistics (only when the loader sets the `queues`
 * switch). Latency histogram: the exporters' coarse layout, bucket j has
 * le = 2^(PW_QHIST_MIN_SHIFT + j) ns for j < PW_QHIST_FINITE, then +Inf;
 * every bound is also a bound of the fine histogram, so j holds exactly the
 * fine slots (4 (j + 1), 4 (j + 2)] (j = 0: [0, 8]). */
#define PW_QHIST_MIN_SHIFT 12
#define PW_QHIST_FINITE 24 /* 2^12 .. 2^35 ns */
#define PW_QHIST_BUCKETS (PW_QHIST_FINITE + 1)

/* One slot of pw_hctx (per-CPU array): one hardware context of one disk. */
struct pw_hctx_val {
  __u64 count;      /* completions counted in pw_io (or its spill slots) */
  __u64 lat_sum_ns; /* their latencies */
  __u64 remote;     /* of count, completed on a CPU other than the one
                       that submitted (rq->mq_ctx->cpu) */
  __u64 buckets[PW_QHIST_BUCKETS]; /* non-cumulative; sum == count */
};

/* pw_hctx_slot value, keyed by pw_disk_key: the disk's hardware contexts
 * are slots [base, base + n) of pw_hctx. n = 0: no slots (pw_hctx full).
 * ready: base and n are written (the creator sets it last). */
struct pw_hctx_range {
  __u32 base;
  __u32 n;
  __u32 ready;
  __u32 pad;
};

/* Spill slots (per CPU, preallocated): where a completion is accounted when
 * its pw_io entry could not be created. Creating an entry of a
 * non-preallocated per-CPU hash allocates in the completion's atomic
 * context and can fail transiently (seen on 6.1 in a guest: the first write
 * of a path lost, reported as io_map_full with one entry in the map). A
 * slot is claimed for a key on first use on that CPU and never released;
 * userspace adds the slots to pw_io's entries of the same key. */
#define PW_SPILL_SLOTS 8
struct pw_io_spill {
  struct pw_io_key key;
  __u32 used;
  __u32 pad;
  struct pw_io_val val;
};

/* I/O slots (pw_io_slot, per-CPU array, and pw_io_owner, its owners):
 * the (device, op) values of pw_io found without a hash. A key's slot is a
 * hash of it masked to the array; the slot is the key's when its owner
 * holds the key, claimed by a compare-and-swap of a free owner's devop (the
 * key's first completion), and given back by userspace only once its disk
 * is gone (no program writes it then): owner set to PW_IO_SLOT_RETIRING,
 * the values zeroed, the owner freed. A key whose slot another key owns is
 * counted in pw_io. seq comes first: userspace frees an owner by writing
 * seq then devop, so a claim never sees its seq overwritten. */
struct pw_io_owner {
  __u64 seq;   /* the key's diskseq */
  __u64 devop; /* dev << 32 | op; 0 = free */
};
#define PW_IO_SLOT_RETIRING (~0ULL)
#define PW_IO_DEVOP(dev, op) (((__u64)(dev) << 32) | (__u64)(op))

/* Own issue stamps (pw_start, for requests whose queue does not stamp
 * rq->io_start_time_ns): an array of 64-byte lines of PW_START_SLOTS
 * 8-byte slots, each one request's stamp word, 0 = free. A request's
 * position (PW_START_POS) is its tag plus a hash of its disk and hardware
 * context (see pw_start_line_of in pathwise_block_body.bpf.h): the
 * requests of one context fill consecutive slots, eight to a line, and
 * a request's home slot is its position's. A word binds the low
 * PW_START_TS_BITS bits of the stamp to PW_START_CHECK_BITS bits of a
 * hash of the request's id, so one aligned 8-byte store or load moves a
 * whole stamp (no compare-and-swap, no word of one stamp read with
 * another's) and a completion takes only a word whose check is its own
 * request's: another request's, in flight in the same line, has the same
 * check by a 2^-24 chance. The stamp's high bits are the completion's:
 * a latency is the low bits' difference, modulo 2^40 ns (18.3 minutes).
 * (Against the 4-way sets of 16-byte ways, a set per tag, that this
 * replaced: a line per eight requests instead of one or two lines per
 * request, and ~10 ns less per own stamp,
 * bench/results/bpf_own_stamp_ab.txt.)
 *
 * A request is named by its id, (dev_t << 32 | hardware context << 16 |
 * tag): while it is in flight no other request has its tag in that
 * context (tags stay below BLK_MQ_MAX_DEPTH, 10240, and context numbers
 * below the CPU count, so 16 bits hold each). */
#define PW_START_SLOTS 8
struct pw_start_line {
  __u64 slot[PW_START_SLOTS]; /* PW_START_WORD(check, ns); 0 = free */
};
#define PW_START_TS_BITS 40
#define PW_START_CHECK_BITS (64 - PW_START_TS_BITS)
#define PW_START_TS_MASK ((1ULL << PW_START_TS_BITS) - 1)
#define PW_START_CHECK(id) \
  (((__u64)(id)*0x9E3779B97F4A7C15ULL) >> PW_START_TS_BITS)
/* Never 0: the stamp's lowest bit is set (1 ns at most). */
#define PW_START_WORD(check, ns)          \
  (((__u64)(check) << PW_START_TS_BITS) | \
   (((__u64)(ns) | 1) & PW_START_TS_MASK))
/* The position of (dev, hardware context number, tag): line
 * pos / PW_START_SLOTS (masked by the caller), home slot
 * pos % PW_START_SLOTS. The contexts' offsets are the high half of a
 * 64-bit product, which every bit of dev and context moves (a 32-bit
 * product's low bits keep its factors' trailing zeros: it put every
 * disk of minor 0, dev_t major << 20, at the same offset). */
#define PW_START_POS(dev, hctx, tag)                          \
  ((__u32)(((((__u64)(dev) << 16) | ((__u64)(hctx)&0xffff)) * \
            0x9E3779B97F4A7C15ULL) >>                         \
           32) +                                              \
   (__u32)(tag))
#define PW_START_ID(dev, hctx, tag)                        \
  (((__u64)(dev) << 32) | ((__u64)((hctx)&0xffff) << 16) | \
   (__u64)((tag)&0xffff))
/* A slot whose stamp is older than this (the histogram's last finite
 * bound, 68.7 s) may be taken by a start that finds no other slot in its
 * line: its request's completion was never seen (a run the kernel
 * skipped), or the request is stuck that long, and then its completion
 * counts no_start_time instead of a latency. Ages are read modulo 2^40
 * ns, and one of 2^39 ns or more as a stamp from the future (another
 * CPU's, a moment after this start's): such an orphan is taken over in
 * 68.7 s to 9.2 minutes of every 18.3. */
#define PW_START_STALE_NS (1ULL << PW_HIST_MAX_SHIFT)

/* NVMe status classes for non-zero statuses, by Status Code Type (bits
 * 10:8 of nvme_request.status, which is the CQE status field >> 1). */
enum pw_nvme_err {
  PW_NVME_GENERIC = 0,  /* SCT 0 */
  PW_NVME_COMMAND = 1,  /* SCT 1: command specific */
  PW_NVME_MEDIA = 2,    /* SCT 2: media and data integrity */
  PW_NVME_PATH = 3,     /* SCT 3: path related (incl. host path errors) */
  PW_NVME_VENDOR = 4,   /* SCT 7 */
  PW_NVME_RESERVED = 5, /* SCT 4..6 */
  PW_NVME_ERR_COUNT = 6,
};

/* Per-path (hidden NVMe path disk, or any disk) value, one per path (not
 * per CPU; updated with atomic adds). */
struct pw_path_val {
  __u64 nvme_errors[PW_NVME_ERR_COUNT]; /* nvme_complete_rq, status != 0 */
  __u64 retries;   /* nvme_complete_rq of a command with retries > 0 */
  __u64 failovers; /* requests ended by nvme_failover_req (block layer) */
};

/* Kernel-side event counters (single per-CPU array slot). */
enum pw_counter {
  /* own issue stamp: pw_start line not found (cannot happen with its
   * masked index; kept so that the reason keeps its series) */
  PW_CNT_DROP_START_FULL = 0,
  PW_CNT_DROP_NO_START = 1,       /* completion without any start time */
  PW_CNT_DROP_IO_FULL = 2,        /* I/O map and spill slots full */
  PW_CNT_DROP_PATH_FULL = 3,      /* path map full (block program) */
  PW_CNT_DROP_NVME_PATH_FULL = 4, /* path map full (nvme program) */
  /* `queues`: a completion counted in pw_io but in no pw_hctx slot (no
   * slots left, or its hardware context beyond the disk's range). */
  PW_CNT_DROP_HCTX = 5,
  /* own issue stamp not stored: every slot of the request's pw_start
   * line held another request's stamp, none stale */
  PW_CNT_DROP_START_COLLISION = 6,
  PW_CNT_COUNT = 7,
};

struct pw_counters {
  __u64 v[PW_CNT_COUNT];
};

/* Name of a disk (gendisk.disk_name, DISK_NAME_LEN = 32), keyed by
 * pw_disk_key. Written on the slow path only, when a (dev, op) I/O entry or
 * a path entry is created: hidden NVMe path disks (nvmeXcYnZ) have no dev_t
 * visible to userspace (no sysfs `dev`, not in /proc/partitions), so userspace
 * joins samples to the topology by this name. */
#define PW_DISK_NAME_LEN 32
struct pw_disk_name {
  char name[PW_DISK_NAME_LEN];
};

#endif /* PATHWISE_BPF_PATHWISE_BPF_H_ */

// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * pathwise block-layer sampler: per (dev_t, op class) completion count,
 * bytes, latency sum, log-linear latency histogram and errors, aggregated
 * per CPU in the kernel; per-path failovers.
 *
 * Two flavours of each program are compiled: tp_btf (direct BTF loads,
 * cheapest) and raw_tp (CO-RE probe reads), and userspace autoloads the
 * one the kernel supports (bpf/block_object.cc probes tp_btf first).
 */
// clang-format off: vmlinux types must come first.
#include "pathwise_blkmq_types.h"
#include "pathwise_vmlinux.h"
// clang-format on

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "pathwise_bpf.h"
#include "pathwise_hist.h"
#include "pathwise_maps.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Settings, filled in by userspace from the running kernel's BTF before
 * load (bpf/kernel_btf.cc). */
const volatile __u8 op_class[PW_REQ_OP_SLOTS] = {};
const volatile __u32 queue_flag_stats_bit = 20; /* QUEUE_FLAG_STATS */
const volatile __u32 rqf_stats_mask = 1U << 17; /* RQF_STATS */
const volatile __u32 req_nvme_mpath_mask = 0;   /* REQ_DRV */
const volatile bool force_own_start = false;
/* Tests: account every completion in the spill slots (see pw_io_spill). */
const volatile bool force_spill = false;
/* With force_spill: only this device (kernel dev_t) is forced, 0 = all. The
 * slots are few (PW_SPILL_SLOTS keys per CPU), so a test forcing every
 * device of a busy host would fill them with other disks' keys. */
const volatile __u32 force_spill_dev = 0;
/* Per hardware queue statistics (--queues). Off by default: the verifier
 * then removes their code, so the default programs cost what they did.
 * hctx_slots is pw_hctx's max_entries. */
const volatile bool queues = false;
const volatile __u32 hctx_slots = 1;

/* Own issue stamps, only for requests whose queue does not stamp
 * rq->io_start_time_ns: lines of one-word slots (struct pw_start_line,
 * pathwise_bpf.h) instead of a hash keyed by request address, so that a
 * stamp costs an inlined array lookup and, as a rule, one load and one
 * store of its home slot at issue and at completion. start_line_mask is
 * pw_start's max_entries - 1 (a power of two), set by userspace. */
const volatile __u32 start_line_mask = 0;

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct pw_start_line);
} pw_start SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_HASH);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __uint(max_entries, 4096);
  __type(key, struct pw_io_key);
  __type(value, struct pw_io_val);
} pw_io SEC(".maps");

static const struct pw_io_val pw_zero_io;

/* Whether slot word `cur` holds the stamp of the request checked `chk`. */
static __always_inline bool pw_slot_is(__u64 cur, __u64 chk) {
  return cur && (cur >> PW_START_TS_BITS) == chk;
}

/* Stores stamp word w of the request checked chk in line l: in its home
 * slot if that is free or already its own (a requeued request is issued
 * again), else in the slot of the line that holds its stamp, else in a
 * free one, else in one whose stamp is older than PW_START_STALE_NS.
 * Counts a start that finds none as PW_CNT_DROP_START_COLLISION. Two CPUs
 * that take one free slot at once (only requests whose lines collide,
 * issued in the same instant) both write it; one word is left whole, and
 * the other request's completion counts no_start_time. A request whose
 * stamp went elsewhere (its home slot was taken) and that is issued again
 * once its home slot is free leaves the older word behind, in its line,
 * until a start takes it as stale. */
static __always_inline void pw_start_put(struct pw_start_line *l, __u32 home,
                                         __u64 chk, __u64 w) {
  __u64 cur = l->slot[home & (PW_START_SLOTS - 1)];
  __u64 age;
  __u32 i;

  if (!cur || pw_slot_is(cur, chk)) {
    l->slot[home & (PW_START_SLOTS - 1)] = w;
    return;
  }
#pragma unroll
  for (i = 0; i < PW_START_SLOTS; i++) {
    if (pw_slot_is(l->slot[i], chk)) {
      l->slot[i] = w;
      return;
    }
  }
#pragma unroll
  for (i = 0; i < PW_START_SLOTS; i++) {
    if (!l->slot[i]) {
      l->slot[i] = w;
      return;
    }
  }
#pragma unroll
  for (i = 0; i < PW_START_SLOTS; i++) {
    age = (w - l->slot[i]) & PW_START_TS_MASK;
    if (age > PW_START_STALE_NS && age < (1ULL << (PW_START_TS_BITS - 1))) {
      l->slot[i] = w;
      return;
    }
  }
  pw_cnt_inc(PW_CNT_DROP_START_COLLISION);
}

/* The stamp word of the request checked chk, taken out of line l (its slot
 * freed); 0 if the line holds none. */
static __always_inline __u64 pw_start_take(struct pw_start_line *l, __u32 home,
                                           __u64 chk) {
  __u64 cur = l->slot[home & (PW_START_SLOTS - 1)];
  __u32 i;

  if (pw_slot_is(cur, chk)) {
    l->slot[home & (PW_START_SLOTS - 1)] = 0;
    return cur;
  }
#pragma unroll
  for (i = 0; i < PW_START_SLOTS; i++) {
    cur = l->slot[i];
    if (pw_slot_is(cur, chk)) {
      l->slot[i] = 0;
      return cur;
    }
  }
  return 0;
}

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, PW_SPILL_SLOTS);
  __type(key, __u32);
  __type(value, struct pw_io_spill);
} pw_io_spill SEC(".maps");

/* This CPU's spill slot for `k`: the one holding it, else the first free
 * one (claimed). NULL when all are taken by other keys. Tracing programs do
 * not nest on one CPU, so a slot has one writer at a time. */
static __always_inline struct pw_io_val *pw_spill(const struct pw_io_key *k) {
  for (__u32 i = 0; i < PW_SPILL_SLOTS; i++) {
    __u32 idx = i;
    struct pw_io_spill *sl = bpf_map_lookup_elem(&pw_io_spill, &idx);
    if (!sl) return NULL;
    if (!sl->used) {
      sl->key = *k;
      sl->used = 1;
      return &sl->val;
    }
    if (sl->key.dev == k->dev && sl->key.op == k->op && sl->key.seq == k->seq)
      return &sl->val;
  }
  return NULL;
}

/* (dev_t, diskseq) -> disk name, written only when an entry of pw_io or
 * pw_path is created (once per key, not per I/O). A disk created on a dev_t
 * freed by another has a new diskseq, hence new keys and its own name;
 * userspace deletes the entries of a disk once a newer one holds its dev_t
 * or its name (bpf/block_object.cc). */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 4096);
  __type(key, struct pw_disk_key);
  __type(value, struct pw_disk_name);
} pw_disk SEC(".maps");

/* 0 when the name is recorded. */
static __always_inline long pw_note_disk(const struct pw_disk_key *dk,
                                         struct gendisk *disk) {
  struct pw_disk_name n = {};
  /* CO-RE-relocated address of disk->disk_name; the same probe read in
   * both flavours (slow path only). */
  bpf_probe_read_kernel_str(n.name, sizeof(n.name), &disk->disk_name);
  return bpf_map_update_elem(&pw_disk, dk, &n, BPF_ANY);
}

/* pw_lookup_or_init() that also records the disk's name on creation. */
static __always_inline void *pw_entry(void *map, const void *key,
                                      const void *zero,
                                      const struct pw_disk_key *dk,
                                      struct gendisk *disk) {
  void *v = bpf_map_lookup_elem(map, key);
  if (v) return v;
  pw_note_disk(dk, disk);
  bpf_map_update_elem(map, key, zero, BPF_NOEXIST);
  return bpf_map_lookup_elem(map, key);
}

/* I/O slots (pathwise_bpf.h): io_slot_mask is pw_io_slot's max_entries -
 * 1 (a power of two); io_slots false: none, every key in pw_io. */
const volatile bool io_slots = false;
const volatile __u32 io_slot_mask = 0;

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct pw_io_owner);
} pw_io_owner SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct pw_io_val);
} pw_io_slot SEC(".maps");

/* k's slot, claimed if free; NULL when another key owns it (or it is being
 * retired, or two CPUs claim it at once: the loser counts this completion
 * in pw_io). A slot is claimed only once its disk's name is recorded:
 * userspace names every slot it reads. */
static __always_inline struct pw_io_val *pw_io_slot_of(
    const struct pw_io_key *k, const struct pw_disk_key *dk,
    struct gendisk *disk) {
  __u64 devop = PW_IO_DEVOP(k->dev, k->op);
  __u32 h =
      k->dev * 0x9E3779B1U ^ (__u32)k->seq * 0x85EBCA77U ^ k->op * 0xC2B2AE3DU;
  __u32 idx = (h ^ (h >> 15)) & io_slot_mask;
  struct pw_io_owner *o = bpf_map_lookup_elem(&pw_io_owner, &idx);

  if (!o) return NULL;
  if (o->devop != devop || o->seq != k->seq) {
    if (o->devop) return NULL;
    if (!bpf_map_lookup_elem(&pw_disk, dk) && pw_note_disk(dk, disk))
      return NULL;
    if (__sync_val_compare_and_swap(&o->devop, 0, devop) != 0) return NULL;
    o->seq = k->seq;
  }
  return bpf_map_lookup_elem(&pw_io_slot, &idx);
}

/* k's I/O slot, else its pw_io entry, else (creation failed, or
 * force_spill) this CPU's spill slot for it; NULL only when all are
 * exhausted. */
static __always_inline struct pw_io_val *pw_io_entry(
    const struct pw_io_key *k, const struct pw_disk_key *dk,
    struct gendisk *disk) {
  if (!force_spill || (force_spill_dev && force_spill_dev != dk->dev)) {
    struct pw_io_val *v = io_slots ? pw_io_slot_of(k, dk, disk) : NULL;
    if (v) return v;
    v = pw_entry(&pw_io, k, &pw_zero_io, dk, disk);
    if (v) return v;
  } else if (!bpf_map_lookup_elem(&pw_disk, dk)) {
    pw_note_disk(dk, disk);
  }
  return pw_spill(k);
}

/* Per hardware queue statistics: one slot per (disk, hardware context),
 * per CPU. A disk's slots are a range taken from pw_hctx the first time one
 * of its completions is counted (pw_hctx_slot, slow path); each CPU caches
 * the range in its copy of the pw_io value, so that a counted completion
 * costs one array lookup. Ranges are never given back (a gone disk's slots
 * stay taken), so pw_hctx holds hctx_slots hardware contexts over the
 * program's life; a completion without a slot is counted as
 * PW_CNT_DROP_HCTX. */
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct pw_hctx_val);
} pw_hctx SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 4096);
  __type(key, struct pw_disk_key);
  __type(value, struct pw_hctx_range);
} pw_hctx_slot SEC(".maps");

/* The next free slot of pw_hctx. */
__u32 pw_hctx_next = 0;

/* Caches the disk's range in v (this CPU's copy), creating it on first use
 * with nr slots (its nr_hw_queues). A range being created on another CPU
 * is not cached: this completion is dropped, the next one looks again. */
static __always_inline void pw_hctx_range_of(struct pw_io_val *v,
                                             const struct pw_disk_key *dk,
                                             __u32 nr) {
  struct pw_hctx_range *r = bpf_map_lookup_elem(&pw_hctx_slot, dk);
  if (!r) {
    struct pw_hctx_range fresh = {};
    if (bpf_map_update_elem(&pw_hctx_slot, dk, &fresh, BPF_NOEXIST)) {
      r = bpf_map_lookup_elem(&pw_hctx_slot, dk);
      if (!r) {
        /* pw_hctx_slot full: no slots for this disk, ever. */
        v->hctx_base1 = 1;
        v->hctx_n = 0;
      }
      return;
    }
    r = bpf_map_lookup_elem(&pw_hctx_slot, dk);
    if (!r) return;
    /* This CPU created the entry: take the range. */
    if (nr && nr <= hctx_slots) {
      __u32 base = __sync_fetch_and_add(&pw_hctx_next, nr);
      if (base <= hctx_slots - nr) {
        r->base = base;
        r->n = nr;
      }
    }
    __sync_fetch_and_add(&r->ready, 1); /* a full barrier, then ready */
  }
  if (!r->ready) return;
  v->hctx_base1 = r->base + 1;
  v->hctx_n = r->n;
}

/* tp_btf flavour. */
#define PW_SFX(n) n##_btf
#define PW_RD(p, f) ((p)->f)
#define PW_TASK() ((struct task_struct *)bpf_get_current_task_btf())
#include "pathwise_block_body.bpf.h"
#undef PW_SFX
#undef PW_RD
#undef PW_TASK

/* raw_tp flavour. */
#define PW_SFX(n) n##_raw
#define PW_RD(p, f) BPF_CORE_READ(p, f)
#define PW_TASK() ((struct task_struct *)bpf_get_current_task())
#include "pathwise_block_body.bpf.h"
#undef PW_SFX
#undef PW_RD
#undef PW_TASK

/* tp_btf arguments may be NULL as far as the verifier knows (6.12 marks
 * raw tracepoint pointer arguments PTR_MAYBE_NULL): check first. */
SEC("tp_btf/block_rq_issue")
int BPF_PROG(pw_issue_btf, struct request *rq) {
  if (!rq) return 0;
  return pw_on_issue_btf(rq);
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(pw_done_btf, struct request *rq, int error,
             unsigned int nr_bytes) {
  if (!rq) return 0;
  return pw_on_complete_btf(rq, error, nr_bytes);
}

SEC("raw_tp/block_rq_issue")
int BPF_PROG(pw_issue_raw, struct request *rq) {
  if (!rq) return 0;
  return pw_on_issue_raw(rq);
}

SEC("raw_tp/block_rq_complete")
int BPF_PROG(pw_done_raw, struct request *rq, int error,
             unsigned int nr_bytes) {
  if (!rq) return 0;
  return pw_on_complete_raw(rq, error, nr_bytes);
}

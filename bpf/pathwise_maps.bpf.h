/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Maps shared by pathwise_block.bpf.c and pathwise_nvme.bpf.c. The nvme
 * object is loaded separately (nvme-core may be loaded later than the
 * agent) and reuses the block object's pw_path and pw_counters maps by fd.
 */
#ifndef PATHWISE_BPF_PATHWISE_MAPS_BPF_H_
#define PATHWISE_BPF_PATHWISE_MAPS_BPF_H_

#include "pathwise_bpf.h"

/* Per-path NVMe and failover counters, keyed by disk (pw_disk_key).
 * Preallocated, so that creating a path's entry never allocates in the
 * completion's atomic context (an allocation there can fail transiently and
 * would lose the path's first failover or NVMe error). One shared value per
 * path, not per CPU: the events are rare, so the programs add with atomics, and
 * the map costs max_entries * ~100 B whatever the number of CPUs. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 4096);
  __type(key, struct pw_disk_key);
  __type(value, struct pw_path_val);
} pw_path SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct pw_counters);
} pw_counters SEC(".maps");

static __always_inline struct pw_counters *pw_cnt(void) {
  __u32 zero = 0;
  return bpf_map_lookup_elem(&pw_counters, &zero);
}

static __always_inline void pw_cnt_inc(enum pw_counter c) {
  struct pw_counters *p = pw_cnt();
  if (p) p->v[c]++;
}

/* Lookup, inserting `zero` first if the key is absent. NULL when full. */
static __always_inline void *pw_lookup_or_init(void *map, const void *key,
                                               const void *zero) {
  void *v = bpf_map_lookup_elem(map, key);
  if (v) return v;
  bpf_map_update_elem(map, key, zero, BPF_NOEXIST);
  return bpf_map_lookup_elem(map, key);
}

static const struct pw_path_val pw_zero_path;

/* Kernel dev_t: MKDEV(major, minor) with MINORBITS = 20. */
#define PW_MKDEV(ma, mi) ((((__u32)(ma)) << 20) | ((__u32)(mi)&0xfffff))

/* gendisk.diskseq (since 5.15; a new number for every disk created, and
 * for every loop device attach), 0 where the kernel has none. RD is the
 * flavour's field read (a plain load for tp_btf). */
#define PW_DISKSEQ(RD, disk) \
  (bpf_core_field_exists((disk)->diskseq) ? (__u64)RD(disk, diskseq) : 0)

#endif /* PATHWISE_BPF_PATHWISE_MAPS_BPF_H_ */

// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * pathwise nvme_complete_rq sampler: per path, NVMe completions with a
 * non-zero status by Status Code Type, and completions of retried
 * commands.
 *
 * nvme_complete_rq is a tracepoint of the nvme-core module: this object is
 * loaded on its own, when the module is there, and reuses the block
 * object's pw_path / pw_counters maps. Failovers are counted by the block
 * object (it sees the request end without its bios), so they are counted
 * even without this program.
 *
 * struct nvme_request lives in the request's PDU (blk_mq_rq_to_pdu(rq) ==
 * rq + 1). Its layout is private to nvme-core, so userspace reads the
 * offsets of `retries` and `status` from nvme-core's BTF and passes them
 * here; this keeps the object loadable (and verifiable) even where that
 * BTF is missing, and makes "no nvme-core BTF" a clear userspace error.
 */
#include "pathwise_vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "pathwise_bpf.h"
#include "pathwise_maps.bpf.h"
#include "pathwise_nvme_status.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 request_size = 0;      /* sizeof(struct request) */
const volatile __u32 nvme_retries_off = 0;  /* offsetof(nvme_request, retries) */
const volatile __u32 nvme_status_shift = 0; /* (status - retries offset) * 8 */

static __always_inline int pw_nvme_account(struct request *rq,
                                           struct gendisk *disk) {
  struct pw_path_val *pv;
  struct pw_disk_key dk = {};
  __u64 window = 0;
  __u32 status, retries;

  if (!disk) return 0; /* admin queue, fabrics connect: no path */
  /* One read covers retries .. status (adjacent u8 fields and a u16). */
  if (bpf_probe_read_kernel(&window, sizeof(window),
                            (void *)((unsigned long)rq + request_size +
                                     nvme_retries_off)))
    return 0;
  retries = window & 0xff;
  status = (window >> (nvme_status_shift & 63)) & 0xffff;
  if (!(status & PW_NVME_SCT_SC_MASK) && !retries) return 0; /* success, first attempt */

  dk.dev = PW_MKDEV(BPF_CORE_READ(disk, major), BPF_CORE_READ(disk, first_minor));
  dk.seq = PW_DISKSEQ(BPF_CORE_READ, disk);
  pv = pw_lookup_or_init(&pw_path, &dk, &pw_zero_path);
  if (!pv) {
    pw_cnt_inc(PW_CNT_DROP_NVME_PATH_FULL);
    return 0;
  }
  /* pw_path is shared by all CPUs (see pathwise_maps.bpf.h). */
  if (status & PW_NVME_SCT_SC_MASK)
    __sync_fetch_and_add(&pv->nvme_errors[pw_nvme_err_class(status)], 1);
  if (retries) __sync_fetch_and_add(&pv->retries, 1);
  return 0;
}

/* On 6.12 the verifier rejects this tp_btf program unless rq is checked
 * for NULL first (raw tracepoint arguments are PTR_MAYBE_NULL there). */
SEC("tp_btf/nvme_complete_rq")
int BPF_PROG(pw_nvme_btf, struct request *rq) {
  struct request_queue *q;
  if (!rq) return 0;
  q = rq->q;
  if (!q) return 0;
  return pw_nvme_account(rq, q->disk);
}

SEC("raw_tp/nvme_complete_rq")
int BPF_PROG(pw_nvme_raw, struct request *rq) {
  struct request_queue *q;
  if (!rq) return 0;
  q = BPF_CORE_READ(rq, q);
  if (!q) return 0;
  return pw_nvme_account(rq, BPF_CORE_READ(q, disk));
}

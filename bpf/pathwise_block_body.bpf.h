/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Body of the block-layer programs, included twice by pathwise_block.bpf.c:
 *   PW_SFX(name)  appends the flavour suffix to a function name;
 *   PW_RD(p, f)   reads p->f: a plain load for tp_btf (BTF-typed pointer,
 *                 faults are caught by the kernel), a CO-RE probe read for
 *                 raw_tp.
 *   PW_TASK()     the current task, typed for PW_RD.
 * No include guard on purpose.
 */

/* rq's pw_start line, its home slot (the low bits of *home) and the check
 * of its id (PW_START_ID): its tag within its hardware context (the I/O
 * scheduler's tag when the queue has one: the request structure belongs
 * to that tag for its life, while its driver tag may change when it is
 * requeued), its context's number and its disk. Its position is the tag
 * plus a hash of (disk, context number), so that the contexts' tag ranges
 * spread over the lines. All are fixed while the request is in flight, so
 * issue and completion find the same slot and check. (Not the request's
 * address: the verifier allows no arithmetic on the tp_btf flavour's
 * pointers.) */
static __always_inline struct pw_start_line *PW_SFX(pw_start_line_of)(
    struct request *rq, __u32 dev, __u32 *home, __u64 *chk) {
  struct request___mq *mrq = (struct request___mq *)rq;
  struct blk_mq_hw_ctx *h = PW_RD(mrq, mq_hctx);
  __u32 num = h ? PW_RD(h, queue_num) : 0;
  int tag = PW_RD(mrq, internal_tag);
  __u32 idx;

  if (tag < 0) tag = PW_RD(mrq, tag);
  *chk = PW_START_CHECK(PW_START_ID(dev, num, (__u32)tag));
  *home = PW_START_POS(dev, num, tag);
  idx = (*home / PW_START_SLOTS) & start_line_mask;
  return bpf_map_lookup_elem(&pw_start, &idx);
}

/* The issue stamp: the time the kernel itself would stamp
 * rq->io_start_time_ns with. blk_time_get_ns() (>= 6.9) returns the
 * submitting task's plug's cached clock when it has one (set by the first
 * stamp of the batch, cleared when the task sleeps or the plug ends), which
 * saves a clock read per request of a batch; else the clock. The kernel
 * also checks in_task(), which BPF cannot: a request started in interrupt
 * context (blk-mq dispatches from tasks and kblockd) on top of a plugged
 * task would take that task's cached time, early by at most its batch. */
static __always_inline __u64 PW_SFX(pw_issue_now)(void) {
  if (bpf_core_field_exists(((struct blk_plug *)0)->cur_ktime)) {
    struct task_struct *t = PW_TASK();
    struct blk_plug *plug = t ? PW_RD(t, plug) : NULL;
    __u64 cached = plug ? PW_RD(plug, cur_ktime) : 0;
    if (cached) return cached;
  }
  return bpf_ktime_get_ns();
}

static __always_inline int PW_SFX(pw_on_issue)(struct request *rq) {
  struct request_queue *q = PW_RD(rq, q);
  struct pw_start_line *line;
  struct gendisk *disk;
  __u64 chk;
  __u32 cls, home;

  if (!q) return 0;
  disk = PW_RD(q, disk);
  if (!disk) return 0; /* admin / fabrics queues: no path disk */
  cls = op_class[PW_RD(rq, cmd_flags) & (PW_REQ_OP_SLOTS - 1)];
  /* blk_mq_start_request() writes rq->io_start_time_ns right after this
   * tracepoint when the queue has QUEUE_FLAG_STATS (on >= 6.10 except for
   * passthrough). Then pathwise stores nothing per I/O. */
  if (!force_own_start && cls != PW_OP_PASSTHRU &&
      (PW_RD(q, queue_flags) & (1UL << queue_flag_stats_bit)))
    return 0;
  line = PW_SFX(pw_start_line_of)(
      rq, PW_MKDEV(PW_RD(disk, major), PW_RD(disk, first_minor)), &home, &chk);
  if (!line) {
    pw_cnt_inc(PW_CNT_DROP_START_FULL);
    return 0;
  }
  pw_start_put(line, home, chk, PW_START_WORD(chk, PW_SFX(pw_issue_now)()));
  return 0;
}

/* Counts a completion that v counted in its disk's hardware context slot
 * (`queues` only), or as PW_CNT_DROP_HCTX. */
static __always_inline void PW_SFX(pw_hctx_count)(struct pw_io_val *v,
                                                  struct request *rq,
                                                  struct request_queue *q,
                                                  const struct pw_disk_key *dk,
                                                  __u64 lat, __u32 idx) {
  struct request___mq *mrq = (struct request___mq *)rq;
  struct blk_mq_hw_ctx *h = PW_RD(mrq, mq_hctx);
  struct blk_mq_ctx *c = PW_RD(mrq, mq_ctx);
  struct pw_hctx_val *hv;
  __u32 num, slot, j;

  if (!v->hctx_base1)
    pw_hctx_range_of(v, dk,
                     PW_RD((struct request_queue___mq *)q, nr_hw_queues));
  if (!h || !v->hctx_base1) {
    pw_cnt_inc(PW_CNT_DROP_HCTX);
    return;
  }
  num = PW_RD(h, queue_num);
  if (num >= v->hctx_n) {
    pw_cnt_inc(PW_CNT_DROP_HCTX);
    return;
  }
  slot = v->hctx_base1 - 1 + num;
  hv = bpf_map_lookup_elem(&pw_hctx, &slot);
  if (!hv) {
    pw_cnt_inc(PW_CNT_DROP_HCTX);
    return;
  }
  hv->count++;
  hv->lat_sum_ns += lat;
  if (c && PW_RD(c, cpu) != bpf_get_smp_processor_id()) hv->remote++;
  j = pw_qhist_bucket(idx);
  barrier_var(j);
  if (j < PW_QHIST_BUCKETS) hv->buckets[j]++;
}

static __always_inline int PW_SFX(pw_on_complete)(struct request *rq, int error,
                                                  unsigned int nr_bytes) {
  struct request_queue *q = PW_RD(rq, q);
  struct pw_io_val *v;
  struct pw_io_key k;
  struct pw_disk_key dk = {};
  struct gendisk *disk;
  __u64 start = 0, now, lat;
  __u32 flags, cls, dev, idx;
  bool own;

  if (!q) return 0;
  disk = PW_RD(q, disk);
  if (!disk) return 0;
  dev = PW_MKDEV(PW_RD(disk, major), PW_RD(disk, first_minor));
  flags = PW_RD(rq, cmd_flags);
  cls = op_class[flags & (PW_REQ_OP_SLOTS - 1)];
  k.dev = dev;
  k.op = cls;
  k.seq = PW_DISKSEQ(PW_RD, disk);
  dk.dev = dev;
  dk.seq = k.seq;

  /* Partial completion (blk_update_request with bytes left): account the
   * bytes, count the request once when its last bytes complete. */
  if (nr_bytes < PW_RD(rq, __data_len)) {
    v = pw_io_entry(&k, &dk, disk);
    if (v) v->bytes += nr_bytes;
    return 0;
  }

  own = force_own_start || cls == PW_OP_PASSTHRU ||
        !(PW_RD(rq, rq_flags) & rqf_stats_mask);
  now = bpf_ktime_get_ns();
  if (own) {
    struct pw_start_line *line;
    __u64 chk, w = 0;
    __u32 home;

    line = PW_SFX(pw_start_line_of)(rq, dev, &home, &chk);
    if (line) w = pw_start_take(line, home, chk);
    /* The word keeps the stamp's low bits: the stamp is now less their
     * age (a latency below 2^40 ns). */
    if (w) start = now - ((now - w) & PW_START_TS_MASK);
  } else {
    start = PW_RD(rq, io_start_time_ns);
  }

  /* nvme_failover_req() steals the bios (rq->bio = NULL, __data_len = 0)
   * and ends the request with status 0; the bios are resubmitted to
   * another path and counted there. Count a failover, not an I/O. */
  if ((flags & req_nvme_mpath_mask) && !error && !nr_bytes &&
      cls != PW_OP_FLUSH && cls != PW_OP_PASSTHRU && !PW_RD(rq, bio)) {
    struct pw_path_val *pv = pw_entry(&pw_path, &dk, &pw_zero_path, &dk, disk);
    if (pv)
      __sync_fetch_and_add(&pv->failovers, 1);
    else
      pw_cnt_inc(PW_CNT_DROP_PATH_FULL);
    return 0;
  }

  if (!start) {
    /* Issued before pathwise attached, or never issued to the device
     * (e.g. the original request of an empty flush sequence). */
    pw_cnt_inc(PW_CNT_DROP_NO_START);
    return 0;
  }

  lat = now > start ? now - start : 0;
  v = pw_io_entry(&k, &dk, disk);
  if (!v) {
    pw_cnt_inc(PW_CNT_DROP_IO_FULL);
    return 0;
  }
  v->count++;
  v->bytes += nr_bytes;
  v->lat_sum_ns += lat;
  if (error) v->errors++;
  if (own) v->own_start++;
  idx = pw_hist_bucket(lat);
  barrier_var(idx); /* keep the bound check for the verifier */
  if (idx < PW_HIST_BUCKETS) v->buckets[idx]++;
  if (queues) PW_SFX(pw_hctx_count)(v, rq, q, &dk, lat, idx);
  return 0;
}

/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Histogram bucket maths of the BPF programs. model/histogram.h is the same
 * layout in C++ (what userspace merges, exports and takes quantiles of);
 * bpf/status.cc checks the constants at compile time and
 * tests/unit/bpf/histogram_test.cc compares the bucketing, so that the kernel's
 * buckets and the exported `le` bounds cannot drift.
 *
 * Prometheus `le` semantics: bucket i holds latencies v with
 *   upper(i - 1) < v <= upper(i).
 * Computing the bucket from v - 1 over half-open [lower, upper) ranges gives
 * exactly that: a value equal to a bound stays in that bound's bucket.
 * (floor(log2(v)) bucketing makes the opposite, off-by-one choice: it puts
 * v = 2^k into the bucket labelled le=2^(k+1).)
 */
#ifndef PATHWISE_BPF_PATHWISE_HIST_H_
#define PATHWISE_BPF_PATHWISE_HIST_H_

#include "pathwise_bpf.h"

#if defined(__bpf__)
#define PW_HIST_INLINE static __always_inline
#else
#define PW_HIST_INLINE static inline
#endif

/* floor(log2(v)) for v > 0, branchy because BPF has no clz. */
PW_HIST_INLINE __u32 pw_log2_u64(__u64 v) {
  __u32 r = 0;
  if (v >> 32) {
    v >>= 32;
    r += 32;
  }
  if (v >> 16) {
    v >>= 16;
    r += 16;
  }
  if (v >> 8) {
    v >>= 8;
    r += 8;
  }
  if (v >> 4) {
    v >>= 4;
    r += 4;
  }
  if (v >> 2) {
    v >>= 2;
    r += 2;
  }
  if (v >> 1) r += 1;
  return r;
}

/* Bucket index in [0, PW_HIST_BUCKETS) of a latency in nanoseconds. */
PW_HIST_INLINE __u32 pw_hist_bucket(__u64 ns) {
  __u64 v;
  __u32 k, sub;
  if (ns <= (1ULL << PW_HIST_MIN_SHIFT)) return 0;
  v = ns - 1;
  if (v >= (1ULL << PW_HIST_MAX_SHIFT)) return PW_HIST_BUCKETS - 1;
  k = pw_log2_u64(v); /* PW_HIST_MIN_SHIFT <= k < PW_HIST_MAX_SHIFT */
  sub = (__u32)(v >> (k - PW_HIST_SUB_BITS)) & (PW_HIST_SUB - 1);
  return 1 + (k - PW_HIST_MIN_SHIFT) * PW_HIST_SUB + sub;
}

/* Inclusive upper bound in ns of finite bucket i (i < PW_HIST_FINITE). */
PW_HIST_INLINE __u64 pw_hist_upper_ns(__u32 i) {
  __u32 j, k, sub;
  if (i == 0) return 1ULL << PW_HIST_MIN_SHIFT;
  j = i - 1;
  k = PW_HIST_MIN_SHIFT + j / PW_HIST_SUB;
  sub = j % PW_HIST_SUB;
  return (1ULL << k) + ((__u64)(sub + 1) << (k - PW_HIST_SUB_BITS));
}

/* Coarse bucket (PW_QHIST_*, pathwise_bpf.h) of fine slot i: the coarse
 * bound 2^k ns is fine slot 4 (k - 10)'s, so coarse bucket j holds the fine
 * slots (4 (j + 1), 4 (j + 2)] (j = 0: [0, 8]), the last one the rest. */
PW_HIST_INLINE __u32 pw_qhist_bucket(__u32 i) {
  __u32 j;
  if (i <= 4 * (PW_QHIST_MIN_SHIFT - PW_HIST_MIN_SHIFT)) return 0;
  j = (i + 3) / 4 - (PW_QHIST_MIN_SHIFT - PW_HIST_MIN_SHIFT);
  return j < PW_QHIST_FINITE ? j : PW_QHIST_FINITE;
}

#endif /* PATHWISE_BPF_PATHWISE_HIST_H_ */

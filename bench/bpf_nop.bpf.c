// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Calibration for bench/bpf_overhead.sh: empty tp_btf programs on the same
 * tracepoints as pathwise. Their bpf_stats run_time_ns per run is what the
 * kernel's run-time accounting itself costs on this machine (two clock
 * reads and the stats update), which every measured program also pays.
 */
#include "pathwise_vmlinux.h"

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("tp_btf/block_rq_issue")
int BPF_PROG(pw_nop_issue, struct request *rq) { return 0; }

SEC("tp_btf/block_rq_complete")
int BPF_PROG(pw_nop_done, struct request *rq, int error,
             unsigned int nr_bytes) {
  return 0;
}

/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The record the NVMe/TCP queue iterator (pathwise_tcpq.bpf.c) writes per
 * nvme_tcp socket, shared with its userspace decoder (tcpq_decode.h).
 */
#ifndef PATHWISE_BPF_PATHWISE_TCPQ_H_
#define PATHWISE_BPF_PATHWISE_TCPQ_H_

#include <linux/types.h>

/* sk_tx_queue_mapping / sk_rx_queue_mapping when nothing was recorded. */
#define PW_NO_QUEUE 0xffff

struct pw_tcpq_rec {
  __u16 family;      /* AF_INET or AF_INET6 */
  __u16 local_port;  /* host byte order */
  __u16 remote_port; /* host byte order */
  __u16 tx_queue;    /* PW_NO_QUEUE: not recorded */
  __u16 rx_queue;    /* PW_NO_QUEUE: not recorded (or not in the kernel) */
  __u16 pad;
  __s32 ctrl_instance; /* N of nvmeN */
  __s32 qid;           /* index in ctrl->queues: 0 is the admin queue */
  __s32 io_cpu;        /* -1 or beyond nr_cpu_ids: unbound */
  __u8 local_addr[16]; /* IPv4: the first 4 bytes */
  __u8 remote_addr[16];
};

#endif /* PATHWISE_BPF_PATHWISE_TCPQ_H_ */

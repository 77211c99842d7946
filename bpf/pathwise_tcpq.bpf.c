// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * pathwise NVMe/TCP queue iterator: walks every TCP socket (iter/tcp) and,
 * for those an nvme_tcp queue owns, writes one struct pw_tcpq_rec: the
 * controller instance, the queue's index in ctrl->queues (its qid), the
 * CPU its io_work runs on and the NIC queues the kernel recorded on the
 * socket (sk_tx_queue_mapping, sk_rx_queue_mapping).
 *
 * struct nvme_tcp_queue and struct nvme_tcp_ctrl are private to the
 * nvme_tcp module: libbpf relocates the accesses below against that
 * module's BTF, so the loader loads this object only when
 * /sys/kernel/btf/nvme_tcp exists.
 *
 * A socket belongs to nvme_tcp when its sk_user_data is a queue whose
 * ->sock is that socket's struct socket and whose place in its
 * controller's queue array is below the controller's queue_count: other
 * owners of sk_user_data (sunrpc, iSCSI, kTLS, sockmap) fail these reads'
 * checks, and every read is a probe read, safe on any pointer.
 */
#include "pathwise_tcpq.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "pathwise_vmlinux.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#pragma clang attribute push(__attribute__((preserve_access_index)), \
                             apply_to = record)

struct seq_file;
struct bpf_iter_meta {
  struct seq_file *seq;
};

struct in6_addr___pw {
  __u8 s6_addr[16];
};

struct sock_common {
  unsigned short skc_family;
  __be32 skc_daddr;
  __be32 skc_rcv_saddr;
  __be16 skc_dport;
  __u16 skc_num;
  struct in6_addr___pw skc_v6_daddr;
  struct in6_addr___pw skc_v6_rcv_saddr;
  /* sk_tx_queue_mapping and sk_rx_queue_mapping are macros for these. */
  unsigned short skc_tx_queue_mapping;
  unsigned short skc_rx_queue_mapping; /* CONFIG_SOCK_RX_QUEUE_MAPPING */
};

struct socket;

struct sock {
  struct sock_common __sk_common;
  void *sk_user_data;
  struct socket *sk_socket;
};

struct tcp_sock;

struct bpf_iter__tcp {
  struct bpf_iter_meta *meta;
  struct sock_common *sk_common;
};

struct nvme_ctrl {
  int instance;
  __u32 queue_count;
};

struct nvme_tcp_ctrl;

struct nvme_tcp_queue {
  struct socket *sock;
  int io_cpu;
  struct nvme_tcp_ctrl *ctrl;
};

struct nvme_tcp_ctrl {
  struct nvme_tcp_queue *queues;
  struct nvme_ctrl ctrl;
};

#pragma clang attribute pop

/* sk_user_data's low bits are flags (SK_USER_DATA_NOCOPY, _BPF, _PSOCK). */
#define PW_SK_USER_DATA_PTRMASK (~7UL)
#define PW_AF_INET 2
#define PW_AF_INET6 10

SEC("iter/tcp")
int pw_tcpq(struct bpf_iter__tcp *ctx) {
  struct sock_common *skc = ctx->sk_common;
  struct pw_tcpq_rec rec = {};
  struct nvme_tcp_queue *q, *queues;
  struct nvme_tcp_ctrl *ctrl;
  struct sock *sk;
  unsigned long ud, size;

  if (!skc) return 0;
  sk = (struct sock *)bpf_skc_to_tcp_sock(skc);
  if (!sk) return 0; /* request and timewait sockets */
  ud = (unsigned long)BPF_CORE_READ(sk, sk_user_data) & PW_SK_USER_DATA_PTRMASK;
  if (!ud) return 0;
  q = (struct nvme_tcp_queue *)ud;
  if (BPF_CORE_READ(q, sock) != BPF_CORE_READ(sk, sk_socket)) return 0;
  ctrl = BPF_CORE_READ(q, ctrl);
  if (!ctrl) return 0;
  queues = BPF_CORE_READ(ctrl, queues);
  size = bpf_core_type_size(struct nvme_tcp_queue);
  if (!queues || (unsigned long)q < (unsigned long)queues || !size) return 0;
  if (((unsigned long)q - (unsigned long)queues) % size) return 0;
  rec.qid = ((unsigned long)q - (unsigned long)queues) / size;
  if ((__u32)rec.qid >= BPF_CORE_READ(ctrl, ctrl.queue_count)) return 0;
  rec.ctrl_instance = BPF_CORE_READ(ctrl, ctrl.instance);
  rec.io_cpu = BPF_CORE_READ(q, io_cpu);
  rec.family = BPF_CORE_READ(sk, __sk_common.skc_family);
  rec.local_port = BPF_CORE_READ(sk, __sk_common.skc_num);
  rec.remote_port = __builtin_bswap16(BPF_CORE_READ(sk, __sk_common.skc_dport));
  if (rec.family == PW_AF_INET) {
    __be32 a = BPF_CORE_READ(sk, __sk_common.skc_rcv_saddr);
    __builtin_memcpy(rec.local_addr, &a, 4);
    a = BPF_CORE_READ(sk, __sk_common.skc_daddr);
    __builtin_memcpy(rec.remote_addr, &a, 4);
  } else if (rec.family == PW_AF_INET6) {
    BPF_CORE_READ_INTO(&rec.local_addr, sk, __sk_common.skc_v6_rcv_saddr);
    BPF_CORE_READ_INTO(&rec.remote_addr, sk, __sk_common.skc_v6_daddr);
  }
  rec.tx_queue = BPF_CORE_READ(sk, __sk_common.skc_tx_queue_mapping);
  rec.rx_queue = PW_NO_QUEUE;
  if (bpf_core_field_exists(sk->__sk_common.skc_rx_queue_mapping))
    rec.rx_queue = BPF_CORE_READ(sk, __sk_common.skc_rx_queue_mapping);
  bpf_seq_write(ctx->meta->seq, &rec, sizeof(rec));
  return 0;
}

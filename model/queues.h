// SPDX-License-Identifier: Apache-2.0
// The NVMe/TCP queue chain: for each NVMe/TCP controller, its I/O queues
// (blk-mq hardware contexts), the TCP flows behind them, the network device
// they leave on, that device's queues and their IRQs.
//
// Every field the host cannot tell is an empty optional with the reason in
// the neighbouring `*_unknown` string, so that exporters say why a link of
// the chain is missing instead of guessing it.
#ifndef PATHWISE_MODEL_QUEUES_H_
#define PATHWISE_MODEL_QUEUES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/histogram.h"

namespace pathwise::model {

// A set of CPU numbers, ascending and without duplicates.
using CpuSet = std::vector<int>;

// What `ss -ti` shows of a TCP socket (struct tcp_info, from sock_diag).
struct TcpSocketInfo {
  uint32_t rtt_us = 0;
  uint32_t rttvar_us = 0;
  uint32_t snd_cwnd = 0;       // segments
  uint32_t unacked = 0;        // segments in flight (tcpi_unacked)
  uint32_t retransmits = 0;    // outstanding retransmissions now
  uint32_t total_retrans = 0;  // retransmitted segments since connect
  uint32_t lost = 0;           // segments considered lost now
  uint64_t bytes_sent = 0;     // tcpi_bytes_sent (4.19+), else 0
  uint64_t bytes_retrans = 0;  // tcpi_bytes_retrans (4.19+), else 0
  uint64_t bytes_acked = 0;
  uint64_t bytes_received = 0;
  uint32_t notsent_bytes = 0;  // queued, not yet sent (4.6+)
  friend bool operator==(const TcpSocketInfo&, const TcpSocketInfo&) = default;
};

// One TCP socket as sock_diag reports it.
struct TcpSocket {
  std::string local_addr;  // numeric, as inet_ntop writes it
  uint16_t local_port = 0;
  std::string remote_addr;
  uint16_t remote_port = 0;
  uint8_t state = 0;   // TCP_ESTABLISHED = 1, ...
  uint64_t inode = 0;  // 0 for a socket no file refers to
  uint32_t uid = 0;
  uint32_t send_queue = 0;            // bytes not yet acknowledged (ss Send-Q)
  uint32_t recv_queue = 0;            // bytes not yet read (ss Recv-Q)
  std::optional<TcpSocketInfo> info;  // absent without INET_DIAG_INFO
  friend bool operator==(const TcpSocket&, const TcpSocket&) = default;
};

// One TX or RX queue of a network device.
struct NicQueue {
  int index = 0;
  // xps_cpus (TX) or rps_cpus (RX); empty when the mask is zero (off) or
  // the file is absent (the kernel without CONFIG_XPS/CONFIG_RPS).
  CpuSet steering_cpus;
  bool steering_known = false;  // the file was there and parsed
  // The IRQ serving this queue, when one could be matched by name.
  std::optional<int> irq;
  friend bool operator==(const NicQueue&, const NicQueue&) = default;
};

// One line of /proc/interrupts with its affinity.
struct Irq {
  int number = 0;
  std::string name;               // the action names, e.g. "virtio0-input.0"
  std::vector<uint64_t> per_cpu;  // interrupts handled by each CPU
  CpuSet affinity;                // smp_affinity_list
  CpuSet effective_affinity;      // effective_affinity_list, when present
  friend bool operator==(const Irq&, const Irq&) = default;
};

// A device's channels as `ethtool -l` shows them (ETHTOOL_GCHANNELS): the
// most the driver can set and what is set now. A channel is an IRQ with
// its queues: `combined` ones serve one RX and one TX queue.
struct NicChannels {
  int max_rx = 0;
  int max_tx = 0;
  int max_other = 0;
  int max_combined = 0;
  int rx = 0;
  int tx = 0;
  int other = 0;
  int combined = 0;
  friend bool operator==(const NicChannels&, const NicChannels&) = default;
};

struct Netdev {
  std::string name;
  int ifindex = 0;
  std::string driver;  // basename of device/driver, "" for virtual devices
  std::vector<NicQueue> tx;
  std::vector<NicQueue> rx;
  std::vector<Irq> irqs;  // the device's queue IRQs, by queue when matched
  // Why IRQs were not matched to queues ("veth has no IRQs", ...), "" if
  // they were.
  std::string irq_unknown;
  // Absent when the driver does not report them (no get_channels, e.g.
  // veth before 5.6) or the query failed; channels_unknown says why.
  std::optional<NicChannels> channels;
  std::string channels_unknown;
  friend bool operator==(const Netdev&, const Netdev&) = default;
};

// One blk-mq hardware context of the controller's tag set: NVMe/TCP I/O
// queue qid = index + 1.
struct Hctx {
  int index = 0;
  CpuSet cpus;  // mq/<index>/cpu_list: the CPUs that submit on it
  friend bool operator==(const Hctx&, const Hctx&) = default;
};

// One blk-mq hardware context of a path disk with the completions the BPF
// sampler counted on it (--queues): every completion of the path is in
// exactly one of its hardware contexts, or in QueueMap::hctx_dropped.
struct HctxIo {
  int index = 0;  // mq/<index>; NVMe qid = index + 1
  CpuSet cpus;    // mq/<index>/cpu_list; empty when unread
  uint64_t completed = 0;
  uint64_t latency_sum_ns = 0;
  // Of completed, those that completed on a CPU other than the one that
  // submitted them (rq->mq_ctx->cpu): an IRQ or a worker elsewhere.
  uint64_t remote_completions = 0;
  // Coarse: counts only at the bounds 2^12 .. 2^35 ns and +Inf.
  LatencyHistogram latency;
  friend bool operator==(const HctxIo&, const HctxIo&) = default;
};

// The hardware contexts of one NVMe path disk that did I/O.
struct PathHctxIo {
  std::string path;        // nvme0c1n1 (or nvme0n1 without multipath)
  std::string controller;  // nvme1, from the name
  std::vector<HctxIo> hctxs;
  friend bool operator==(const PathHctxIo&, const PathHctxIo&) = default;
};

// One TCP connection of an NVMe/TCP controller (admin or I/O queue).
struct TcpQueueFlow {
  TcpSocket socket;
  // The queue behind the socket: qid 0 is the admin queue.
  std::optional<int> qid;
  std::optional<int> io_cpu;    // the CPU its io_work runs on
  std::optional<int> tx_queue;  // NIC TX queue its segments leave on
  std::optional<int> rx_queue;  // NIC RX queue they arrive on
  // Why qid/io_cpu or the NIC queues are unknown; "" when known.
  std::string queue_unknown;
  std::string nic_queue_unknown;
  friend bool operator==(const TcpQueueFlow&, const TcpQueueFlow&) = default;
};

struct TcpController {
  std::string name;  // nvme0
  std::string traddr;
  std::string trsvcid;
  std::string src_addr;  // from `address`, or the flows' local address
  std::string host_iface;
  std::optional<int> queue_count;  // sysfs queue_count: admin + I/O queues
  std::string netdev;              // egress device, "" when unknown
  std::string netdev_unknown;
  std::vector<Hctx> hctxs;   // of its first namespace's path disk
  std::string block_device;  // that disk (nvme0c0n1), "" if none
  std::vector<TcpQueueFlow> flows;
  // Why flows are missing or ambiguous; "" when every queue had a socket.
  std::string flows_unknown;
  friend bool operator==(const TcpController&, const TcpController&) = default;
};

// A misalignment of the chain that costs throughput.
enum class QueueMismatchKind {
  // A flow's RX IRQ is not affine to the CPU its queue's io_work runs on:
  // every receive crosses CPUs before nvme_tcp sees it.
  kRxIrqOffWorker,
  // Several I/O queues' flows leave (TX) or arrive (RX) on one NIC queue:
  // they contend for its lock and its IRQ's CPU.
  kSharedNicQueue,
  // A controller has more I/O queues than its device has queue pairs, so
  // some must share (the over-subscription of many CPUs on few NIC queues).
  kOversubscribed,
};

enum class NicDirection { kTx, kRx };

struct QueueMismatch {
  QueueMismatchKind kind = QueueMismatchKind::kOversubscribed;
  std::string controller;  // "" for kSharedNicQueue across controllers
  std::optional<int> qid;  // kRxIrqOffWorker
  std::string netdev;
  std::optional<NicDirection> direction;  // kSharedNicQueue
  std::optional<int> nic_queue;           // kRxIrqOffWorker, kSharedNicQueue
  // kSharedNicQueue: the I/O queues sharing it, "nvme0:1", "nvme1:3", ...
  std::vector<std::string> queues;
  // kOversubscribed: the controller's I/O queues and the device's queue
  // pairs (the lesser of its TX and RX queue counts).
  int io_queues = 0;
  int nic_queues = 0;
  std::optional<int> io_cpu;  // kRxIrqOffWorker
  CpuSet irq_cpus;            // kRxIrqOffWorker
  friend bool operator==(const QueueMismatch&, const QueueMismatch&) = default;
};

// The whole map, as one collection sees it.
struct QueueMap {
  int online_cpus = 0;
  std::vector<TcpController> controllers;
  std::vector<Netdev> netdevs;  // every device a controller leaves on
  // Whether the queue behind each socket came from BPF, and why not.
  bool bpf_queues = false;
  std::string bpf_unknown;
  std::vector<QueueMismatch> mismatches;  // collectors/queue_mismatch.h
  // Per hardware context I/O of every NVMe path (the block sampler with
  // per-hctx statistics): counted since the sampler attached, or over
  // hctx_window_seconds when that is > 0 (`pathwise queues`).
  bool hctx_io = false;
  std::string hctx_io_unknown;  // why hctx_io is false; "" = not asked for
  std::vector<PathHctxIo> path_hctx;
  uint64_t hctx_dropped = 0;  // completions counted per path, in no hctx
  double hctx_window_seconds = 0;
  friend bool operator==(const QueueMap&, const QueueMap&) = default;
};

// The device of the map named `name`; null when the map has none.
inline const Netdev* FindNetdev(const QueueMap& m, std::string_view name) {
  for (const Netdev& d : m.netdevs) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

}  // namespace pathwise::model

#endif  // PATHWISE_MODEL_QUEUES_H_

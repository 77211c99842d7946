// SPDX-License-Identifier: Apache-2.0
// The queue map's join: what collectors/queue_scan.h read (NVMe/TCP
// controllers from sysfs, TCP sockets from sock_diag, interface addresses,
// network devices' queues, IRQs and, when BPF could read them, the
// nvme_tcp queue behind each socket) into one model::QueueMap. Pure, so
// that every rule is tested on fixtures.
#ifndef PATHWISE_COLLECTORS_QUEUE_MAP_H_
#define PATHWISE_COLLECTORS_QUEUE_MAP_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/queues.h"

namespace pathwise::collectors {

struct RawTcpController {
  std::string name;     // nvme0
  std::string address;  // sysfs `address`, verbatim
  std::optional<int> queue_count;
  std::string block_device;  // a path disk of it (nvme0c0n1), "" if none
  std::vector<model::Hctx> hctxs;
};

struct RawNetdev {
  std::string name;
  int ifindex = 0;
  std::string driver;               // basename of device/driver
  std::string bus_device;           // basename of device ("virtio0", a PCI BDF)
  std::vector<model::NicQueue> tx;  // steering read, irq unset
  std::vector<model::NicQueue> rx;
  std::optional<model::NicChannels> channels;  // ReadNicChannels
  std::string channels_unknown;                // why channels is absent
};

struct InterfaceAddress {
  std::string ifname;
  std::string addr;  // numeric, as NormalizeAddress writes it
};

// What the BPF socket iterator read of one nvme_tcp socket.
struct BpfSocketQueue {
  std::string local_addr;
  uint16_t local_port = 0;
  std::string remote_addr;
  uint16_t remote_port = 0;
  int ctrl_instance = -1;  // the N of nvmeN
  int qid = -1;
  int io_cpu = -1;  // -1: WORK_CPU_UNBOUND or unknown
  // sk_tx_queue_mapping / sk_rx_queue_mapping; nullopt when not recorded
  // (the socket has sent/received nothing through a multi-queue device).
  std::optional<int> tx_queue;
  std::optional<int> rx_queue;
};

struct RawQueueScan {
  int online_cpus = 0;
  std::vector<RawTcpController> controllers;
  std::vector<model::TcpSocket> sockets;  // every TCP socket
  std::string sockets_error;              // why there are none, "" if read
  std::vector<InterfaceAddress> addresses;
  std::vector<RawNetdev> netdevs;
  std::vector<model::Irq> irqs;  // with their affinities
  // nullopt when BPF did not run; bpf_unknown says why.
  std::optional<std::vector<BpfSocketQueue>> bpf;
  std::string bpf_unknown;
};

// The interface that holds `addr` among `addresses`, "" if none.
std::string InterfaceForAddress(const std::string& addr,
                                const std::vector<InterfaceAddress>& addresses);

// The netdev with its queue IRQs matched by name (MatchQueueIrq) among
// `irqs`, and irq_unknown set when none matched.
model::Netdev MatchNetdevIrqs(const RawNetdev& raw,
                              const std::vector<model::Irq>& irqs);

model::QueueMap BuildQueueMap(const RawQueueScan& raw);

}  // namespace pathwise::collectors

#endif  // PATHWISE_COLLECTORS_QUEUE_MAP_H_

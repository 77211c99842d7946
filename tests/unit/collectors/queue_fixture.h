// SPDX-License-Identifier: Apache-2.0
// A queue map as BPF sees it on a 4-CPU host: nvme0 with 4 I/O queues over
// eth0 (mlx5, 2 combined channels; IRQ 40 on CPU 0, IRQ 41 on CPU 1), so
// the over-subscribed case: qid 1 is aligned, qid 2 shares channel 0 from
// CPU 1, qids 3 and 4 share channel 1 from CPUs 2 and 3. Shared by the
// mismatch, plan and view tests.
#ifndef PATHWISE_TESTS_UNIT_COLLECTORS_QUEUE_FIXTURE_H_
#define PATHWISE_TESTS_UNIT_COLLECTORS_QUEUE_FIXTURE_H_

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "collectors/queue_map.h"
#include "collectors/queue_mismatch.h"

namespace pathwise::collectors::testing {

inline RawQueueScan FourQueuesOnTwoChannelsScan() {
  RawQueueScan raw;
  raw.online_cpus = 4;
  RawTcpController c;
  c.name = "nvme0";
  c.address = "traddr=192.168.7.2,trsvcid=4420,src_addr=192.168.7.1";
  c.queue_count = 5;
  c.block_device = "nvme0c0n1";
  for (int i = 0; i < 4; ++i) c.hctxs.push_back({i, {i}});
  raw.controllers.push_back(c);
  std::vector<BpfSocketQueue> bpf;
  // qid: io_cpu, channel
  const int io_cpu[5] = {0, 0, 1, 2, 3};
  const int chan[5] = {0, 0, 0, 1, 1};
  for (int qid = 0; qid < 5; ++qid) {
    model::TcpSocket s;
    s.local_addr = "192.168.7.1";
    s.local_port = 40000 + qid;
    s.remote_addr = "192.168.7.2";
    s.remote_port = 4420;
    s.state = 1;
    s.info = model::TcpSocketInfo{.rtt_us = static_cast<uint32_t>(250 + qid),
                                  .unacked = static_cast<uint32_t>(qid),
                                  .total_retrans = 3,
                                  .bytes_sent = 1000,
                                  .bytes_received = 2000,
                                  .notsent_bytes = 10};
    raw.sockets.push_back(s);
    bpf.push_back({s.local_addr, s.local_port, s.remote_addr, s.remote_port, 0,
                   qid, io_cpu[qid], chan[qid], chan[qid]});
  }
  raw.bpf = bpf;
  raw.addresses = {{"eth0", "192.168.7.1"}};
  RawNetdev d;
  d.name = "eth0";
  d.ifindex = 2;
  d.driver = "mlx5_core";
  d.bus_device = "0000:3b:00.0";
  for (int i = 0; i < 2; ++i) {
    d.tx.push_back({.index = i, .steering_known = true});
    d.rx.push_back({.index = i, .steering_known = true});
  }
  raw.netdevs.push_back(d);
  for (int i = 0; i < 2; ++i) {
    model::Irq irq;
    irq.number = 40 + i;
    irq.name = absl::StrCat("mlx5_comp", i, "@pci:0000:3b:00.0");
    irq.affinity = {0, 1, 2, 3};
    irq.effective_affinity = {i};
    irq.per_cpu = {5, 5, 0, 0};
    raw.irqs.push_back(irq);
  }
  return raw;
}

inline model::QueueMap FourQueuesOnTwoChannels() {
  model::QueueMap m = BuildQueueMap(FourQueuesOnTwoChannelsScan());
  m.mismatches = FindMismatches(m);
  return m;
}

}  // namespace pathwise::collectors::testing

#endif  // PATHWISE_TESTS_UNIT_COLLECTORS_QUEUE_FIXTURE_H_

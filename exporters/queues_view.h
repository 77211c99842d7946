// SPDX-License-Identifier: Apache-2.0
// The views of the NVMe/TCP queue map (model/queues.h): the JSON document
// and the text table `pathwise queues` prints, and the plan's text.
#ifndef PATHWISE_EXPORTERS_QUEUES_VIEW_H_
#define PATHWISE_EXPORTERS_QUEUES_VIEW_H_

#include <string>
#include <vector>

#include "model/queues.h"
#include "nlohmann/json.hpp"

namespace pathwise::exporters {

// {"online_cpus", "bpf": {"queues": bool, "unknown": reason},
//  "controllers": [{name, traddr, trsvcid, src_addr, host_iface,
//     queue_count, io_queues, netdev, netdev_unknown, block_device,
//     "hctxs": [{index, qid, cpus}], flows_unknown,
//     "flows": [{qid, io_cpu, queue_unknown, local_addr, local_port,
//        remote_addr, remote_port, inode, send_queue, recv_queue,
//        "tcp": {rtt_us, rttvar_us, snd_cwnd, unacked, retransmits,
//                total_retrans, lost, bytes_sent, bytes_retrans,
//                bytes_acked, bytes_received, notsent_bytes} | null,
//        tx_queue, rx_queue, nic_queue_unknown, rx_irq, rx_irq_cpus}]}],
//  "netdevs": [{name, ifindex, driver, irq_unknown,
//     "tx": [{index, xps_cpus, irq}], "rx": [{index, rps_cpus, irq}],
//     "irqs": [{number, name, affinity, effective_affinity, per_cpu}]}],
//  "mismatches": [{kind, controller, qid, netdev, direction, nic_queue,
//     queues, io_queues, nic_queues, io_cpu, irq_cpus}]}
// An unknown number is null; xps_cpus/rps_cpus are null when the file is
// absent and [] when steering is off.
nlohmann::json QueueMapToJson(const model::QueueMap& m);

// One block per controller: its portal, device and hardware contexts, then
// one line per flow (qid, io_cpu, 4-tuple, RTT, retransmits, in flight,
// queued, TX/RX queue, RX IRQ and its CPUs); then the devices' queues and
// the mismatches, each marked with "!".
std::string QueueMapToText(const model::QueueMap& m);

// The per hardware queue I/O of the map (model::PathHctxIo), as the
// "hardware_queues" member of QueueMapToJson: {counted, unknown,
// window_seconds (null: since attach), dropped, "paths": [{path,
// controller, "hctxs": [{index, qid, cpus, completed, latency_sum_ns,
// remote_completions, mean_inflight (null without a window),
// "latency_buckets": [{le_ns (null = +Inf), count}] (coarse,
// non-cumulative)}]}]}; and as text: per path one line per queue (qid,
// CPUs, I/Os, IOPS, mean and p99 latency, mean in flight, remote share).
// Both are shown only when per-queue I/O was asked for (hctx_io, or a
// reason in hctx_io_unknown).
nlohmann::json HctxIoToJson(const model::QueueMap& m);
std::string HctxIoToText(const model::QueueMap& m);

// A CPU set as a list: "0-3,8" ("" for none).
std::string CpuListText(const model::CpuSet& cpus);

}  // namespace pathwise::exporters

#endif  // PATHWISE_EXPORTERS_QUEUES_VIEW_H_

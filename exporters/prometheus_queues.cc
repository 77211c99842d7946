// SPDX-License-Identifier: Apache-2.0
// The NVMe/TCP queue map's families (--queues): per controller its I/O
// queues and hardware contexts, per TCP flow its socket figures and the
// queue, CPU and NIC queues behind it where known, and the mismatches; per
// path and hardware queue its I/O (with the eBPF sampler).
// Nothing without --queues.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "exporters/labels.h"
#include "exporters/prometheus_internal.h"
#include "exporters/queues_view.h"

namespace pathwise::exporters::internal {
namespace {

using prometheus::MetricFamily;
using prometheus::MetricType;

constexpr model::QueueMismatchKind kAllMismatches[] = {
    model::QueueMismatchKind::kRxIrqOffWorker,
    model::QueueMismatchKind::kSharedNicQueue,
    model::QueueMismatchKind::kOversubscribed};

// A flow is identified by its controller and local port (the qid is
// known only with BPF; the port changes when the controller reconnects).
Labels FlowLabels(const model::TcpController& c, const model::TcpQueueFlow& f) {
  return {{"controller", c.name},
          {"qid", f.qid ? absl::StrCat(*f.qid) : ""},
          {"local_port", absl::StrCat(f.socket.local_port)}};
}

struct FlowFamilies {
  MetricFamily info =
      Family("pathwise_flow_info",
             "One NVMe/TCP connection of a controller (qid empty where it "
             "is unknown: needs BPF with nvme_tcp's BTF), with its 4-tuple "
             "and egress device.",
             MetricType::Gauge);
  MetricFamily rtt = Family("pathwise_flow_rtt_seconds",
                            "Smoothed round-trip time of the flow's socket "
                            "(tcp_info tcpi_rtt).",
                            MetricType::Gauge);
  MetricFamily retrans =
      Family("pathwise_flow_retransmitted_segments_total",
             "Segments the flow's socket retransmitted (tcpi_total_retrans).",
             MetricType::Counter);
  MetricFamily sent = Family("pathwise_flow_sent_bytes_total",
                             "Bytes the flow's socket sent (tcpi_bytes_sent, "
                             "Linux 4.19+; retransmissions included).",
                             MetricType::Counter);
  MetricFamily received =
      Family("pathwise_flow_received_bytes_total",
             "Bytes the flow's socket received (tcpi_bytes_received).",
             MetricType::Counter);
  MetricFamily unacked = Family(
      "pathwise_flow_unacked_segments",
      "Segments in flight, sent and not yet acknowledged (tcpi_unacked).",
      MetricType::Gauge);
  MetricFamily notsent = Family("pathwise_flow_notsent_bytes",
                                "Bytes queued on the flow's socket and not yet "
                                "sent (tcpi_notsent_bytes).",
                                MetricType::Gauge);
  MetricFamily io_cpu = Family(
      "pathwise_flow_io_cpu",
      "The CPU the flow's nvme_tcp queue runs its io_work on (needs BPF; "
      "absent for an unbound queue).",
      MetricType::Gauge);
  MetricFamily nic_queue =
      Family("pathwise_flow_nic_queue",
             "The NIC queue the flow leaves on (direction=tx) or arrives on "
             "(direction=rx), as the kernel recorded it on the socket (needs "
             "BPF unless the device has one queue that way).",
             MetricType::Gauge);
};

void AddFlow(const model::TcpController& c, const model::TcpQueueFlow& f,
             FlowFamilies& ff) {
  const Labels l = FlowLabels(c, f);
  AddGauge(ff.info,
           With(l, {{"local_addr", f.socket.local_addr},
                    {"remote_addr", f.socket.remote_addr},
                    {"remote_port", absl::StrCat(f.socket.remote_port)},
                    {"netdev", c.netdev}}),
           1);
  AddGauge(ff.notsent, l, f.socket.info ? f.socket.info->notsent_bytes : 0);
  if (f.socket.info) {
    const model::TcpSocketInfo& i = *f.socket.info;
    AddGauge(ff.rtt, l, i.rtt_us / 1e6);
    AddCounter(ff.retrans, l, i.total_retrans);
    AddCounter(ff.sent, l, static_cast<double>(i.bytes_sent));
    AddCounter(ff.received, l, static_cast<double>(i.bytes_received));
    AddGauge(ff.unacked, l, i.unacked);
  }
  if (f.io_cpu) AddGauge(ff.io_cpu, l, *f.io_cpu);
  if (f.tx_queue)
    AddGauge(ff.nic_queue, With(l, {{"direction", "tx"}}), *f.tx_queue);
  if (f.rx_queue)
    AddGauge(ff.nic_queue, With(l, {{"direction", "rx"}}), *f.rx_queue);
}

// Per device: its queue counts and each queue IRQ's CPUs.
void AddNetdevFamilies(const model::QueueMap& m,
                       std::vector<MetricFamily>& out) {
  MetricFamily nic =
      Family("pathwise_queue_nic_queues",
             "Queues of a network device an NVMe/TCP controller leaves on, by "
             "direction.",
             MetricType::Gauge);
  MetricFamily irq_cpus = Family(
      "pathwise_queue_nic_irq_cpus",
      "CPUs a NIC queue's IRQ is delivered to (effective affinity where the "
      "kernel has it, else smp_affinity_list); the value is their count.",
      MetricType::Gauge);
  for (const model::Netdev& d : m.netdevs) {
    AddGauge(nic, {{"netdev", d.name}, {"direction", "tx"}},
             static_cast<double>(d.tx.size()));
    AddGauge(nic, {{"netdev", d.name}, {"direction", "rx"}},
             static_cast<double>(d.rx.size()));
    for (const auto& [qs, dir] :
         {std::pair{&d.rx, "rx"}, std::pair{&d.tx, "tx"}}) {
      for (const model::NicQueue& q : *qs) {
        if (!q.irq) continue;
        for (const model::Irq& i : d.irqs) {
          if (i.number != *q.irq) continue;
          const model::CpuSet& cpus =
              i.effective_affinity.empty() ? i.affinity : i.effective_affinity;
          AddGauge(irq_cpus,
                   {{"netdev", d.name},
                    {"direction", dir},
                    {"queue", absl::StrCat(q.index)},
                    {"irq", absl::StrCat(i.number)},
                    {"cpus", CpuListText(cpus)}},
                   static_cast<double>(cpus.size()));
        }
      }
    }
  }
  Push(out, std::move(nic));
  Push(out, std::move(irq_cpus));
}

// Per path and hardware context (qid = hctx + 1): what the BPF sampler
// counted since it attached. Nothing unless it counted (hctx_io).
void AddHctxFamilies(const model::QueueMap& m, std::vector<MetricFamily>& out) {
  if (!m.hctx_io) return;
  MetricFamily completed = Family(
      "pathwise_queue_hctx_completed_total",
      "I/Os completed on a path's hardware queue (blk-mq hctx, qid = hctx + "
      "1), as counted per path: their sum over a path's queues plus "
      "pathwise_queue_hctx_dropped_total is its I/O count.",
      MetricType::Counter);
  MetricFamily latency = Family(
      "pathwise_queue_hctx_latency_seconds",
      "Latency (issue to completion) of the I/Os completed on a path's "
      "hardware queue, in the coarse buckets; rate(_sum) is the mean number "
      "in flight on it (Little's law, iostat's aqu-sz).",
      MetricType::Histogram);
  MetricFamily remote = Family(
      "pathwise_queue_hctx_remote_completions_total",
      "Of those I/Os, the ones completed on a CPU other than the one that "
      "submitted them (the queue's IRQ or worker is on another CPU).",
      MetricType::Counter);
  for (const model::PathHctxIo& p : m.path_hctx) {
    for (const model::HctxIo& h : p.hctxs) {
      const Labels l = {{"controller", p.controller},
                        {"path", p.path},
                        {"qid", absl::StrCat(h.index + 1)}};
      AddCounter(completed, l, static_cast<double>(h.completed));
      AddHistogram(latency, l, h.latency,
                   static_cast<double>(h.latency_sum_ns) / 1e9,
                   HistogramBuckets::kCoarse);
      AddCounter(remote, l, static_cast<double>(h.remote_completions));
    }
  }
  MetricFamily dropped = Family(
      "pathwise_queue_hctx_dropped_total",
      "I/Os counted per path but on no hardware queue: the per-queue slots "
      "were used up, or the queue lies beyond those the path had when it "
      "was first seen.",
      MetricType::Counter);
  AddCounter(dropped, {}, static_cast<double>(m.hctx_dropped));
  Push(out, std::move(completed));
  Push(out, std::move(latency));
  Push(out, std::move(remote));
  Push(out, std::move(dropped));
}

}  // namespace

void AddQueueFamilies(const model::QueueMap& m,
                      std::vector<MetricFamily>& out) {
  MetricFamily bpf = Family(
      "pathwise_queue_map_bpf",
      "1 when the qid, io_cpu and NIC queues behind each NVMe/TCP socket "
      "come from BPF (nvme_tcp's BTF), 0 when they are unknown.",
      MetricType::Gauge);
  AddGauge(bpf, {}, m.bpf_queues ? 1 : 0);
  MetricFamily io_queues = Family(
      "pathwise_queue_io_queues",
      "I/O queues of an NVMe/TCP controller (queue_count minus the admin "
      "queue), each a blk-mq hardware context and a TCP connection.",
      MetricType::Gauge);
  MetricFamily flows = Family(
      "pathwise_queue_flows",
      "Established TCP connections matched to the controller (I/O queues + "
      "1 when all are up).",
      MetricType::Gauge);
  MetricFamily hctx = Family(
      "pathwise_queue_hctx_cpus",
      "CPUs that submit on a hardware context (mq/N/cpu_list); qid = hctx "
      "+ 1.",
      MetricType::Gauge);
  FlowFamilies ff;
  for (const model::TcpController& c : m.controllers) {
    const Labels base = {{"controller", c.name}};
    if (c.queue_count) {
      AddGauge(io_queues, base, *c.queue_count > 0 ? *c.queue_count - 1 : 0);
    }
    AddGauge(flows, base, static_cast<double>(c.flows.size()));
    for (const model::Hctx& h : c.hctxs) {
      AddGauge(hctx,
               With(base, {{"qid", absl::StrCat(h.index + 1)},
                           {"cpus", CpuListText(h.cpus)}}),
               static_cast<double>(h.cpus.size()));
    }
    for (const model::TcpQueueFlow& f : c.flows) AddFlow(c, f, ff);
  }
  MetricFamily mismatches = Family(
      "pathwise_queue_mismatches",
      "Misalignments of the NVMe/TCP chain found, by kind: rx_irq_off_worker "
      "(a flow's RX IRQ is not on its io_work CPU), shared_nic_queue (one "
      "NIC queue carries several I/O queues), oversubscribed (a controller "
      "has more I/O queues than its device has queue pairs).",
      MetricType::Gauge);
  for (model::QueueMismatchKind k : kAllMismatches) {
    int n = 0;
    for (const model::QueueMismatch& x : m.mismatches) n += x.kind == k;
    AddGauge(mismatches, {{"kind", std::string(QueueMismatchLabel(k))}}, n);
  }
  Push(out, std::move(bpf));
  Push(out, std::move(io_queues));
  Push(out, std::move(flows));
  Push(out, std::move(hctx));
  AddNetdevFamilies(m, out);
  Push(out, std::move(mismatches));
  for (MetricFamily* f :
       {&ff.info, &ff.rtt, &ff.retrans, &ff.sent, &ff.received, &ff.unacked,
        &ff.notsent, &ff.io_cpu, &ff.nic_queue}) {
    Push(out, std::move(*f));
  }
  AddHctxFamilies(m, out);
}

}  // namespace pathwise::exporters::internal

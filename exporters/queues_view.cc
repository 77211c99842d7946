// SPDX-License-Identifier: Apache-2.0
#include "exporters/queues_view.h"

#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "exporters/labels.h"

namespace pathwise::exporters {
namespace {

using nlohmann::json;

template <typename T>
json Opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

const model::Netdev* FindNetdev(const model::QueueMap& m,
                                const std::string& name) {
  for (const model::Netdev& d : m.netdevs) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

// The RX IRQ of a flow and the CPUs it is delivered to.
struct RxIrq {
  std::optional<int> irq;
  model::CpuSet cpus;
};
RxIrq RxIrqOf(const model::Netdev* d, const model::TcpQueueFlow& f) {
  RxIrq out;
  if (d == nullptr || !f.rx_queue) return out;
  for (const model::NicQueue& q : d->rx) {
    if (q.index == *f.rx_queue) out.irq = q.irq;
  }
  if (!out.irq) return out;
  for (const model::Irq& i : d->irqs) {
    if (i.number != *out.irq) continue;
    out.cpus = i.effective_affinity.empty() ? i.affinity : i.effective_affinity;
  }
  return out;
}

int IoQueues(const model::TcpController& c) {
  if (c.queue_count && *c.queue_count > 0) return *c.queue_count - 1;
  return static_cast<int>(c.hctxs.size());
}

json TcpJson(const model::TcpSocket& s) {
  if (!s.info) return nullptr;
  const model::TcpSocketInfo& i = *s.info;
  return {{"rtt_us", i.rtt_us},
          {"rttvar_us", i.rttvar_us},
          {"snd_cwnd", i.snd_cwnd},
          {"unacked", i.unacked},
          {"retransmits", i.retransmits},
          {"total_retrans", i.total_retrans},
          {"lost", i.lost},
          {"bytes_sent", i.bytes_sent},
          {"bytes_retrans", i.bytes_retrans},
          {"bytes_acked", i.bytes_acked},
          {"bytes_received", i.bytes_received},
          {"notsent_bytes", i.notsent_bytes}};
}

json FlowJson(const model::TcpQueueFlow& f, const model::Netdev* d) {
  const RxIrq rx = RxIrqOf(d, f);
  return {{"qid", Opt(f.qid)},
          {"io_cpu", Opt(f.io_cpu)},
          {"queue_unknown", f.queue_unknown},
          {"local_addr", f.socket.local_addr},
          {"local_port", f.socket.local_port},
          {"remote_addr", f.socket.remote_addr},
          {"remote_port", f.socket.remote_port},
          {"inode", f.socket.inode},
          {"send_queue", f.socket.send_queue},
          {"recv_queue", f.socket.recv_queue},
          {"tcp", TcpJson(f.socket)},
          {"tx_queue", Opt(f.tx_queue)},
          {"rx_queue", Opt(f.rx_queue)},
          {"nic_queue_unknown", f.nic_queue_unknown},
          {"rx_irq", Opt(rx.irq)},
          {"rx_irq_cpus", rx.cpus}};
}

// `ethtool -l`: the counts set now and the driver's maxima; null when the
// driver does not report them (channels_unknown says why).
json ChannelsJson(const std::optional<model::NicChannels>& c) {
  if (!c) return nullptr;
  return {{"combined", c->combined},
          {"max_combined", c->max_combined},
          {"rx", c->rx},
          {"max_rx", c->max_rx},
          {"tx", c->tx},
          {"max_tx", c->max_tx},
          {"other", c->other},
          {"max_other", c->max_other}};
}

json NicQueuesJson(const std::vector<model::NicQueue>& qs, const char* mask) {
  json out = json::array();
  for (const model::NicQueue& q : qs) {
    out.push_back(
        {{"index", q.index},
         {mask, q.steering_known ? json(q.steering_cpus) : json(nullptr)},
         {"irq", Opt(q.irq)}});
  }
  return out;
}

json MismatchJson(const model::QueueMismatch& x) {
  return {{"kind", QueueMismatchLabel(x.kind)},
          {"controller", x.controller},
          {"qid", Opt(x.qid)},
          {"netdev", x.netdev},
          {"direction",
           x.direction ? json(NicDirectionLabel(*x.direction)) : json(nullptr)},
          {"nic_queue", Opt(x.nic_queue)},
          {"queues", x.queues},
          {"io_queues", x.io_queues},
          {"nic_queues", x.nic_queues},
          {"io_cpu", Opt(x.io_cpu)},
          {"irq_cpus", x.irq_cpus}};
}

template <typename T>
std::string OptText(const std::optional<T>& v) {
  return v ? absl::StrCat(*v) : "?";
}

std::string MismatchText(const model::QueueMismatch& x) {
  switch (x.kind) {
    case model::QueueMismatchKind::kRxIrqOffWorker:
      return absl::StrCat(
          "rx_irq_off_worker: ", x.controller, " qid ", OptText(x.qid),
          " io_work on CPU ", OptText(x.io_cpu), ", its RX IRQ (", x.netdev,
          " rx-", OptText(x.nic_queue), ") on CPU ", CpuListText(x.irq_cpus));
    case model::QueueMismatchKind::kSharedNicQueue:
      return absl::StrCat("shared_nic_queue: ", x.netdev, " ",
                          x.direction ? NicDirectionLabel(*x.direction) : "?",
                          "-", OptText(x.nic_queue), " carries I/O queues ",
                          absl::StrJoin(x.queues, " "));
    case model::QueueMismatchKind::kOversubscribed:
      return absl::StrCat("oversubscribed: ", x.controller, " has ",
                          x.io_queues, " I/O queues, ", x.netdev, " has ",
                          x.nic_queues, " queue pairs");
  }
  return "";
}

void ControllerText(const model::QueueMap& m, const model::TcpController& c,
                    std::string& out) {
  const model::Netdev* d = FindNetdev(m, c.netdev);
  absl::StrAppend(&out, c.name, " tcp ", c.traddr, ":", c.trsvcid, " from ",
                  c.src_addr.empty() ? "?" : c.src_addr, " via ",
                  c.netdev.empty() ? "?" : c.netdev, ", ", IoQueues(c),
                  " I/O queues\n");
  if (!c.netdev_unknown.empty()) {
    absl::StrAppend(&out, "  device: ", c.netdev_unknown, "\n");
  }
  for (const model::Hctx& h : c.hctxs) {
    absl::StrAppend(&out, "  hctx ", h.index, " = qid ", h.index + 1,
                    ", submitted from CPU ", CpuListText(h.cpus), "\n");
  }
  absl::StrAppend(
      &out, absl::StrFormat("  %-4s %-6s %-22s %-22s %9s %7s %8s %8s "
                            "%4s %4s %6s %s\n",
                            "qid", "io_cpu", "local", "remote", "rtt_ms",
                            "retrans", "inflight", "notsent", "txq", "rxq",
                            "rx_irq", "irq_cpus"));
  std::set<std::string> reasons;
  for (const model::TcpQueueFlow& f : c.flows) {
    const RxIrq rx = RxIrqOf(d, f);
    const model::TcpSocketInfo info =
        f.socket.info.value_or(model::TcpSocketInfo{});
    absl::StrAppend(
        &out,
        absl::StrFormat(
            "  %-4s %-6s %-22s %-22s %9.3f %7u %8u %8u %4s %4s %6s %s\n",
            OptText(f.qid), OptText(f.io_cpu),
            absl::StrCat(f.socket.local_addr, ":", f.socket.local_port),
            absl::StrCat(f.socket.remote_addr, ":", f.socket.remote_port),
            info.rtt_us / 1000.0, info.total_retrans, info.unacked,
            info.notsent_bytes, OptText(f.tx_queue), OptText(f.rx_queue),
            OptText(rx.irq), rx.cpus.empty() ? "-" : CpuListText(rx.cpus)));
    if (!f.queue_unknown.empty())
      reasons.insert("qid/io_cpu " + f.queue_unknown);
    if (!f.nic_queue_unknown.empty()) {
      reasons.insert("txq/rxq " + f.nic_queue_unknown);
    }
  }
  if (!c.flows_unknown.empty()) {
    absl::StrAppend(&out, "  flows: ", c.flows_unknown, "\n");
  }
  for (const std::string& r : reasons) absl::StrAppend(&out, "  ? ", r, "\n");
  for (const model::QueueMismatch& x : m.mismatches) {
    if (x.controller == c.name) {
      absl::StrAppend(&out, "  ! ", MismatchText(x), "\n");
    }
  }
}

void NetdevText(const model::Netdev& d, std::string& out) {
  absl::StrAppend(&out, d.name, " (", d.driver.empty() ? "virtual" : d.driver,
                  "): ", d.tx.size(), " TX, ", d.rx.size(), " RX queues\n");
  if (!d.irq_unknown.empty()) {
    absl::StrAppend(&out, "  IRQs: ", d.irq_unknown, "\n");
  }
  if (d.channels) {
    // As `ethtool -l`: what is set now, then the most the driver takes.
    const model::NicChannels& c = *d.channels;
    absl::StrAppend(&out, "  channels: combined ", c.combined, " of max ",
                    c.max_combined, ", rx ", c.rx, " of ", c.max_rx, ", tx ",
                    c.tx, " of ", c.max_tx, ", other ", c.other, " of ",
                    c.max_other, "\n");
  } else if (!d.channels_unknown.empty()) {
    absl::StrAppend(&out, "  channels: ? (", d.channels_unknown, ")\n");
  }
  auto queues = [&](const std::vector<model::NicQueue>& qs, const char* kind,
                    const char* mask) {
    for (const model::NicQueue& q : qs) {
      absl::StrAppend(&out, "  ", kind, "-", q.index, " ", mask, " ",
                      !q.steering_known         ? "?"
                      : q.steering_cpus.empty() ? "off"
                                                : CpuListText(q.steering_cpus),
                      " irq ", OptText(q.irq));
      for (const model::Irq& i : d.irqs) {
        if (q.irq && i.number == *q.irq) {
          absl::StrAppend(
              &out, " (", i.name, ") on CPU ",
              CpuListText(i.effective_affinity.empty() ? i.affinity
                                                       : i.effective_affinity));
        }
      }
      absl::StrAppend(&out, "\n");
    }
  };
  queues(d.tx, "tx", "xps");
  queues(d.rx, "rx", "rps");
}

}  // namespace

std::string CpuListText(const model::CpuSet& cpus) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    parts.push_back(j == i ? absl::StrCat(cpus[i])
                           : absl::StrCat(cpus[i], "-", cpus[j]));
    i = j + 1;
  }
  return absl::StrJoin(parts, ",");
}

nlohmann::json QueueMapToJson(const model::QueueMap& m) {
  json controllers = json::array();
  for (const model::TcpController& c : m.controllers) {
    const model::Netdev* d = FindNetdev(m, c.netdev);
    json hctxs = json::array();
    for (const model::Hctx& h : c.hctxs) {
      hctxs.push_back(
          {{"index", h.index}, {"qid", h.index + 1}, {"cpus", h.cpus}});
    }
    json flows = json::array();
    for (const model::TcpQueueFlow& f : c.flows)
      flows.push_back(FlowJson(f, d));
    controllers.push_back({{"name", c.name},
                           {"traddr", c.traddr},
                           {"trsvcid", c.trsvcid},
                           {"src_addr", c.src_addr},
                           {"host_iface", c.host_iface},
                           {"queue_count", Opt(c.queue_count)},
                           {"io_queues", IoQueues(c)},
                           {"netdev", c.netdev},
                           {"netdev_unknown", c.netdev_unknown},
                           {"block_device", c.block_device},
                           {"hctxs", hctxs},
                           {"flows_unknown", c.flows_unknown},
                           {"flows", flows}});
  }
  json netdevs = json::array();
  for (const model::Netdev& d : m.netdevs) {
    json irqs = json::array();
    for (const model::Irq& i : d.irqs) {
      irqs.push_back({{"number", i.number},
                      {"name", i.name},
                      {"affinity", i.affinity},
                      {"effective_affinity", i.effective_affinity},
                      {"per_cpu", i.per_cpu}});
    }
    netdevs.push_back({{"name", d.name},
                       {"ifindex", d.ifindex},
                       {"driver", d.driver},
                       {"irq_unknown", d.irq_unknown},
                       {"channels", ChannelsJson(d.channels)},
                       {"channels_unknown", d.channels_unknown},
                       {"tx", NicQueuesJson(d.tx, "xps_cpus")},
                       {"rx", NicQueuesJson(d.rx, "rps_cpus")},
                       {"irqs", irqs}});
  }
  json mismatches = json::array();
  for (const model::QueueMismatch& x : m.mismatches) {
    mismatches.push_back(MismatchJson(x));
  }
  json out = {{"online_cpus", m.online_cpus},
              {"bpf", {{"queues", m.bpf_queues}, {"unknown", m.bpf_unknown}}},
              {"controllers", controllers},
              {"netdevs", netdevs},
              {"mismatches", mismatches}};
  if (m.hctx_io || !m.hctx_io_unknown.empty()) {
    out["hardware_queues"] = HctxIoToJson(m);
  }
  return out;
}

namespace {
// The NVMe/TCP chain: controllers, flows, devices, mismatches.
std::string ChainText(const model::QueueMap& m) {
  std::string out;
  if (m.controllers.empty()) return "no NVMe/TCP controllers\n";
  if (!m.bpf_queues) {
    absl::StrAppend(&out, "qid and io_cpu per flow: ",
                    m.bpf_unknown.empty() ? "unknown" : m.bpf_unknown, "\n\n");
  }
  for (const model::TcpController& c : m.controllers) {
    ControllerText(m, c, out);
    absl::StrAppend(&out, "\n");
  }
  for (const model::Netdev& d : m.netdevs) NetdevText(d, out);
  bool header = false;
  for (const model::QueueMismatch& x : m.mismatches) {
    if (!x.controller.empty()) continue;  // shown with its controller
    if (!header) absl::StrAppend(&out, "\nmismatches:\n");
    header = true;
    absl::StrAppend(&out, "  ! ", MismatchText(x), "\n");
  }
  return out;
}
}  // namespace

std::string QueueMapToText(const model::QueueMap& m) {
  std::string out = ChainText(m);
  if (m.hctx_io || !m.hctx_io_unknown.empty()) {
    absl::StrAppend(&out, "\n", HctxIoToText(m));
  }
  return out;
}

}  // namespace pathwise::exporters

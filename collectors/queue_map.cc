// SPDX-License-Identifier: Apache-2.0
#include "collectors/queue_map.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "collectors/queue_parse.h"
#include "model/types.h"

namespace pathwise::collectors {
namespace {

constexpr uint8_t kTcpEstablished = 1;

constexpr char kNeedsBpf[] =
    "unknown (needs BPF with the nvme_tcp module's BTF: the queue behind a "
    "socket is kernel-private)";

using Tuple = std::tuple<std::string, uint16_t, std::string, uint16_t>;

Tuple TupleOf(const model::TcpSocket& s) {
  return {s.local_addr, s.local_port, s.remote_addr, s.remote_port};
}

bool Matches(const model::TcpSocket& s, const FabricsAddress& a) {
  if (s.state != kTcpEstablished) return false;
  if (s.remote_addr != a.traddr) return false;
  if (absl::StrCat(s.remote_port) != a.trsvcid) return false;
  const std::string& local = !a.src_addr.empty() ? a.src_addr : a.host_traddr;
  return local.empty() || s.local_addr == local;
}

// The NIC queues of one flow when BPF did not say: a device with one queue
// in a direction has no choice to make.
void SingleQueues(const model::Netdev* dev, model::TcpQueueFlow& f) {
  if (dev == nullptr) {
    if (f.nic_queue_unknown.empty()) {
      f.nic_queue_unknown = "unknown (egress device unknown)";
    }
    return;
  }
  if (!f.tx_queue && dev->tx.size() == 1) f.tx_queue = 0;
  if (!f.rx_queue && dev->rx.size() == 1) f.rx_queue = 0;
  if ((!f.tx_queue || !f.rx_queue) && f.nic_queue_unknown.empty()) {
    f.nic_queue_unknown = absl::StrCat(
        "unknown (", dev->name, " has ", dev->tx.size(), " TX and ",
        dev->rx.size(),
        " RX queues; the ones a flow uses are recorded on its socket, which "
        "needs BPF)");
  }
}

struct ControllerJoin {
  const std::vector<model::TcpSocket>* sockets;
  const std::map<Tuple, const BpfSocketQueue*>* bpf;
  bool bpf_ran;
  std::string bpf_unknown;
};

void JoinFlows(const RawTcpController& rc, const FabricsAddress& addr,
               bool shared, const ControllerJoin& j, model::TcpController& c) {
  const int instance = model::ControllerInstance(rc.name);
  for (const model::TcpSocket& s : *j.sockets) {
    if (!Matches(s, addr)) continue;
    const auto b = j.bpf->find(TupleOf(s));
    const BpfSocketQueue* q = b == j.bpf->end() ? nullptr : b->second;
    // The iterator names the controller; without it a socket is this
    // controller's only if no other controller uses the same portal.
    if (q != nullptr && q->ctrl_instance != instance) continue;
    if (q == nullptr && shared) continue;
    model::TcpQueueFlow f;
    f.socket = s;
    if (q != nullptr) {
      f.qid = q->qid;
      if (q->io_cpu >= 0) {
        f.io_cpu = q->io_cpu;
      } else {
        // nvme_tcp leaves the admin queue, and every queue with
        // wq_unbound, to any CPU.
        f.queue_unknown = "io_cpu: none (unbound work: any CPU)";
      }
      f.tx_queue = q->tx_queue;
      f.rx_queue = q->rx_queue;
      if (!f.tx_queue || !f.rx_queue) {
        f.nic_queue_unknown =
            "unknown (none recorded on the socket yet: nothing sent or "
            "received through a multi-queue device since it was set, or a "
            "driver that records no RX queue)";
      }
    } else if (j.bpf_ran) {
      f.queue_unknown =
          "unknown (the BPF iterator found no nvme_tcp queue behind this "
          "socket)";
    } else {
      f.queue_unknown = j.bpf_unknown.empty()
                            ? std::string(kNeedsBpf)
                            : absl::StrCat("unknown (", j.bpf_unknown, ")");
    }
    c.flows.push_back(std::move(f));
  }
  std::sort(
      c.flows.begin(), c.flows.end(),
      [](const model::TcpQueueFlow& a, const model::TcpQueueFlow& b) {
        return std::make_tuple(a.qid.value_or(INT32_MAX), a.socket.local_port) <
               std::make_tuple(b.qid.value_or(INT32_MAX), b.socket.local_port);
      });
  if (shared && c.flows.empty()) {
    c.flows_unknown =
        absl::StrCat("unknown (several controllers connect from ",
                     addr.src_addr, " to ", addr.traddr, ":", addr.trsvcid,
                     "; their sockets are told apart only with BPF)");
  } else if (c.queue_count &&
             static_cast<int>(c.flows.size()) != *c.queue_count) {
    c.flows_unknown =
        absl::StrCat("queue_count is ", *c.queue_count, " but ", c.flows.size(),
                     " established sockets matched (connecting "
                     "or reconnecting?)");
  }
}

}  // namespace

std::string InterfaceForAddress(
    const std::string& addr, const std::vector<InterfaceAddress>& addresses) {
  if (addr.empty()) return "";
  for (const InterfaceAddress& a : addresses) {
    if (a.addr == addr) return a.ifname;
  }
  return "";
}

model::Netdev MatchNetdevIrqs(const RawNetdev& raw,
                              const std::vector<model::Irq>& irqs) {
  model::Netdev d;
  d.name = raw.name;
  d.ifindex = raw.ifindex;
  d.driver = raw.driver;
  d.tx = raw.tx;
  d.rx = raw.rx;
  d.channels = raw.channels;
  d.channels_unknown = raw.channels_unknown;
  auto set = [](std::vector<model::NicQueue>& qs, int index, int irq) {
    for (model::NicQueue& q : qs) {
      if (q.index == index && !q.irq) q.irq = irq;
    }
  };
  for (const model::Irq& irq : irqs) {
    std::optional<IrqQueue> q =
        MatchQueueIrq(irq.name, raw.name, raw.bus_device);
    if (!q) continue;
    if (q->kind != IrqQueueKind::kTx) set(d.rx, q->index, irq.number);
    if (q->kind != IrqQueueKind::kRx) set(d.tx, q->index, irq.number);
    d.irqs.push_back(irq);
  }
  if (d.irqs.empty()) {
    d.irq_unknown =
        raw.driver.empty()
            ? "none (a virtual device: no queue IRQs; receive work runs "
              "where the sender's or the backlog's softirq runs)"
            : absl::StrCat("unknown (no IRQ named after the queues of ",
                           raw.name, ", driver ", raw.driver, ")");
  }
  return d;
}

model::QueueMap BuildQueueMap(const RawQueueScan& raw) {
  model::QueueMap m;
  m.online_cpus = raw.online_cpus;
  m.bpf_queues = raw.bpf.has_value();
  m.bpf_unknown = raw.bpf_unknown;

  std::map<Tuple, const BpfSocketQueue*> bpf;
  if (raw.bpf) {
    for (const BpfSocketQueue& q : *raw.bpf) {
      bpf[{q.local_addr, q.local_port, q.remote_addr, q.remote_port}] = &q;
    }
  }
  std::vector<FabricsAddress> addrs;
  std::map<std::tuple<std::string, std::string, std::string>, int> by_portal;
  for (const RawTcpController& rc : raw.controllers) {
    addrs.push_back(ParseFabricsAddress(rc.address));
    const FabricsAddress& a = addrs.back();
    ++by_portal[{a.traddr, a.trsvcid, a.src_addr}];
  }
  const ControllerJoin join{&raw.sockets, &bpf, raw.bpf.has_value(),
                            raw.bpf_unknown};

  std::map<std::string, const RawNetdev*> devs;
  for (const RawNetdev& d : raw.netdevs) devs[d.name] = &d;
  std::map<std::string, model::Netdev> used;

  for (size_t i = 0; i < raw.controllers.size(); ++i) {
    const RawTcpController& rc = raw.controllers[i];
    const FabricsAddress& a = addrs[i];
    model::TcpController c;
    c.name = rc.name;
    c.traddr = a.traddr;
    c.trsvcid = a.trsvcid;
    c.src_addr = a.src_addr;
    c.host_iface = a.host_iface;
    c.queue_count = rc.queue_count;
    c.block_device = rc.block_device;
    c.hctxs = rc.hctxs;
    if (!raw.sockets_error.empty()) {
      c.flows_unknown = absl::StrCat("unknown (", raw.sockets_error, ")");
    } else {
      JoinFlows(rc, a, by_portal[{a.traddr, a.trsvcid, a.src_addr}] > 1, join,
                c);
    }
    if (c.src_addr.empty() && !c.flows.empty()) {
      c.src_addr = c.flows.front().socket.local_addr;
    }
    // host_iface binds the sockets to that device; otherwise the device
    // holding the local address.
    c.netdev = !a.host_iface.empty()
                   ? a.host_iface
                   : InterfaceForAddress(c.src_addr, raw.addresses);
    const auto d = devs.find(c.netdev);
    if (c.netdev.empty() || d == devs.end()) {
      c.netdev_unknown =
          c.netdev.empty()
              ? absl::StrCat("unknown (no interface holds the local address ",
                             c.src_addr.empty() ? "(none)" : c.src_addr, ")")
              : absl::StrCat("unknown (", c.netdev, " not in sysfs)");
      c.netdev.clear();
    } else if (!used.contains(c.netdev)) {
      used[c.netdev] = MatchNetdevIrqs(*d->second, raw.irqs);
    }
    const model::Netdev* dev = c.netdev.empty() ? nullptr : &used[c.netdev];
    for (model::TcpQueueFlow& f : c.flows) SingleQueues(dev, f);
    m.controllers.push_back(std::move(c));
  }
  for (auto& [name, d] : used) m.netdevs.push_back(std::move(d));
  return m;
}

}  // namespace pathwise::collectors

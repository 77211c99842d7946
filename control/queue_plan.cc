// SPDX-License-Identifier: Apache-2.0
#include "control/queue_plan.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace pathwise::control {
namespace {

const model::CpuSet* IrqCpusOf(const model::Netdev& d, int irq) {
  for (const model::Irq& i : d.irqs) {
    if (i.number != irq) continue;
    return i.effective_affinity.empty() ? &i.affinity : &i.effective_affinity;
  }
  return nullptr;
}

bool Has(const model::CpuSet& s, int cpu) {
  return std::find(s.begin(), s.end(), cpu) != s.end();
}

// The queue of `qs` whose IRQ is delivered to `cpu` only, if any.
std::optional<int> QueueOnCpu(const model::Netdev& d,
                              const std::vector<model::NicQueue>& qs, int cpu) {
  for (const model::NicQueue& q : qs) {
    if (!q.irq) continue;
    const model::CpuSet* cpus = IrqCpusOf(d, *q.irq);
    if (cpus != nullptr && *cpus == model::CpuSet{cpu}) return q.index;
  }
  return std::nullopt;
}

const model::NicQueue* QueueAt(const std::vector<model::NicQueue>& qs,
                               int index) {
  for (const model::NicQueue& q : qs) {
    if (q.index == index) return &q;
  }
  return nullptr;
}

// How many queue pairs `ethtool -L` can give a device: its combined
// channels, or for a driver with only separate ones, RX and TX channels.
struct ChannelLimit {
  bool combined = true;
  int max = 0;
};

std::optional<ChannelLimit> LimitOf(const model::Netdev& d) {
  if (!d.channels) return std::nullopt;
  const model::NicChannels& c = *d.channels;
  if (c.max_combined > 0) return ChannelLimit{true, c.max_combined};
  const int separate = std::min(c.max_rx, c.max_tx);
  if (separate > 0) return ChannelLimit{false, separate};
  return std::nullopt;  // reports no channel it could set
}

std::string ChannelCommand(const std::string& dev, const ChannelLimit& l,
                           int n) {
  return l.combined ? absl::StrCat("ethtool -L ", dev, " combined ", n)
                    : absl::StrCat("ethtool -L ", dev, " rx ", n, " tx ", n);
}

// One I/O queue's flow with a known qid and io_cpu.
struct Flow {
  const model::TcpController* c;
  const model::TcpQueueFlow* f;
  std::string Who() const { return absl::StrCat(c->name, " qid ", *f->qid); }
};

struct Planner {
  const model::QueueMap& m;
  std::vector<std::string>* notes;
  std::vector<PlanStep> steps;
  std::set<std::string> seen;
  // RX queue -> the io_cpu it is kept or set aside for.
  std::map<std::pair<std::string, int>, int> reserved;
  // RPS / XPS: queue -> the io_cpus whose flows use it.
  std::map<std::pair<std::string, int>, model::CpuSet> rps, xps;

  void Add(std::string command, std::string why) {
    if (!seen.insert(command).second) return;
    steps.push_back({std::move(command), std::move(why)});
  }

  static void Insert(model::CpuSet& set, int cpu) {
    if (!Has(set, cpu)) set.push_back(cpu);
  }

  bool Aligned(const model::Netdev& d, const Flow& x) const {
    if (!x.f->rx_queue) return false;
    const model::NicQueue* q = QueueAt(d.rx, *x.f->rx_queue);
    if (q == nullptr || !q->irq) return false;
    const model::CpuSet* cpus = IrqCpusOf(d, *q->irq);
    return cpus != nullptr && *cpus == model::CpuSet{*x.f->io_cpu};
  }

  void Steer(const model::Netdev& d, const Flow& x, int queue) {
    const model::TcpSocket& s = x.f->socket;
    if (d.driver.empty() || d.rx.size() < 2) return;
    const bool v6 = s.local_addr.find(':') != std::string::npos;
    Add(absl::StrCat("ethtool -N ", d.name, " flow-type ", v6 ? "tcp6" : "tcp4",
                     " src-ip ", s.remote_addr, " dst-ip ", s.local_addr,
                     " src-port ", s.remote_port, " dst-port ", s.local_port,
                     " action ", queue),
        absl::StrCat("steer ", x.Who(), "'s receive to rx-", queue,
                     ", whose IRQ is (or is set) on CPU ", *x.f->io_cpu,
                     " where its io_work runs (needs ntuple filters: ethtool "
                     "-K ",
                     d.name,
                     " ntuple on; the local port changes when the controller "
                     "reconnects)"));
  }

  void PinIrq(const model::Netdev& d, int queue, int cpu,
              const std::string& who) {
    const model::NicQueue* q = QueueAt(d.rx, queue);
    if (q == nullptr || !q->irq) return;
    Add(absl::StrCat("echo ", cpu, " > /proc/irq/", *q->irq,
                     "/smp_affinity_list"),
        absl::StrCat("the IRQ of ", d.name, " rx-", queue, " serves ", who,
                     ", whose io_work runs on CPU ", cpu,
                     "; irqbalance may move it back (ban the IRQ there)"));
  }

  // Receive: keep the flows that are aligned, then give each other flow an
  // RX queue whose IRQ is (or is moved) on its io_cpu, one CPU per queue.
  void Receive(const model::Netdev& d, const std::vector<Flow>& flows) {
    if (d.irqs.empty()) {
      for (const Flow& x : flows) {
        if (x.f->rx_queue) Insert(rps[{d.name, *x.f->rx_queue}], *x.f->io_cpu);
      }
      return;
    }
    for (const Flow& x : flows) {
      if (Aligned(d, x)) reserved[{d.name, *x.f->rx_queue}] = *x.f->io_cpu;
    }
    for (const Flow& x : flows) {
      if (Aligned(d, x)) continue;
      const int cpu = *x.f->io_cpu;
      std::optional<int> target;
      for (const auto& [key, c] : reserved) {
        if (key.first == d.name && c == cpu) target = key.second;
      }
      if (!target) {
        const std::optional<int> there = QueueOnCpu(d, d.rx, cpu);
        if (there && !reserved.contains({d.name, *there})) target = there;
      }
      if (!target && x.f->rx_queue &&
          !reserved.contains({d.name, *x.f->rx_queue})) {
        target = x.f->rx_queue;
        PinIrq(d, *target, cpu, x.Who());
      }
      if (!target) {
        for (const model::NicQueue& q : d.rx) {
          if (!q.irq || reserved.contains({d.name, q.index})) continue;
          target = q.index;
          PinIrq(d, q.index, cpu, x.Who());
          break;
        }
      }
      if (!target) {
        notes->push_back(absl::StrCat(
            x.Who(), " (CPU ", cpu, "): no RX queue of ", d.name,
            " left to give it; every queue serves another I/O queue's CPU"));
        continue;
      }
      reserved[{d.name, *target}] = cpu;
      if (target != x.f->rx_queue) Steer(d, x, *target);
    }
  }

  void Transmit(const model::Netdev& d, const Flow& x) {
    if (d.tx.size() < 2) return;  // nothing to choose
    const int cpu = *x.f->io_cpu;
    std::optional<int> q = QueueOnCpu(d, d.tx, cpu);
    // No queue completes on that CPU: one no other CPU transmits on yet,
    // else the one the flow uses.
    for (size_t i = 0; !q && i < d.tx.size(); ++i) {
      const auto it = xps.find({d.name, d.tx[i].index});
      if (it == xps.end() || it->second == model::CpuSet{cpu}) {
        q = d.tx[i].index;
      }
    }
    if (!q) q = x.f->tx_queue;
    if (q) Insert(xps[{d.name, *q}], cpu);
  }

  // More channels where the device can have them, else (or instead) fewer
  // I/O queues: `ethtool -L` beyond the driver's maximum is refused.
  void Oversubscribed(const model::QueueMismatch& x) {
    const model::Netdev* d = model::FindNetdev(m, x.netdev);
    const std::string has =
        absl::StrCat(x.controller, " has ", x.io_queues, " I/O queues but ",
                     x.netdev, " ", x.nic_queues, " queue pairs");
    // The queue count the reconnect step asks for: what the device has,
    // or what it will have after the channel step.
    int reconnect = x.nic_queues;
    std::string reconnect_why =
        absl::StrCat("or fewer I/O queues: one per queue pair of ", x.netdev);
    // A virtual device's queues are fixed when it is created.
    if (d != nullptr && !d->driver.empty()) {
      const std::optional<ChannelLimit> limit = LimitOf(*d);
      if (!limit) {
        Add(absl::StrCat("ethtool -L ", x.netdev, " combined ", x.io_queues),
            absl::StrCat(has,
                         ": more channels give each its own (its channel "
                         "maximum is unknown: ",
                         d->channels ? "it reports no channel count it "
                                       "can set"
                         : d->channels_unknown.empty() ? "not read"
                                                       : d->channels_unknown,
                         "; ethtool refuses more than the NIC has, then "
                         "fewer I/O queues is the step)"));
      } else if (limit->max >= x.io_queues) {
        Add(ChannelCommand(x.netdev, *limit, x.io_queues),
            absl::StrCat(has, ": more channels give each its own (", x.netdev,
                         " takes up to ", limit->max, ")"));
      } else {
        const std::string short_of =
            absl::StrCat(x.netdev, " takes at most ", limit->max, " ",
                         limit->combined ? "combined" : "RX/TX",
                         " channels, fewer than the ", x.io_queues,
                         " I/O queues of ", x.controller);
        if (limit->max > x.nic_queues) {
          Add(ChannelCommand(x.netdev, *limit, limit->max),
              absl::StrCat(has, ": ", short_of,
                           "; its maximum lessens the sharing, and with the "
                           "reconnect below ends it"));
          reconnect = limit->max;
          reconnect_why =
              absl::StrCat("fewer I/O queues, one per channel of ", x.netdev,
                           " after the step above: ", short_of,
                           ", so more channels alone cannot end the sharing");
        } else {
          reconnect_why = absl::StrCat(
              "fewer I/O queues, one per queue pair of ", x.netdev, ": ",
              short_of, " and has them all, so no channel step can help");
        }
      }
    }
    Add(absl::StrCat("nvme connect ... --nr-io-queues=", reconnect,
                     "  # reconnect ", x.controller),
        std::move(reconnect_why));
  }

  // One mask per queue: every io_cpu whose flows should use it.
  void Flush(std::map<std::pair<std::string, int>, model::CpuSet>& masks,
             bool tx) {
    for (auto& [key, cpus] : masks) {
      std::sort(cpus.begin(), cpus.end());
      const model::Netdev* d = model::FindNetdev(m, key.first);
      const model::NicQueue* q =
          d ? QueueAt(tx ? d->tx : d->rx, key.second) : nullptr;
      if (q != nullptr && q->steering_known && q->steering_cpus == cpus) {
        continue;
      }
      const std::string list = absl::StrJoin(cpus, ",");
      Add(absl::StrCat("echo ", CpuMask(cpus), " > /sys/class/net/", key.first,
                       "/queues/", tx ? "tx-" : "rx-", key.second,
                       tx ? "/xps_cpus" : "/rps_cpus"),
          tx ? absl::StrCat("XPS: what the io_work on CPU ", list,
                            " sends leaves on tx-", key.second, " of ",
                            key.first, ", completed on the same CPU")
             : absl::StrCat(key.first,
                            " has no queue IRQs; RPS hands the receive "
                            "processing of rx-",
                            key.second, " to CPU ", list,
                            ", where the io_work of its flows runs"));
    }
  }
};

}  // namespace

std::string CpuMask(const model::CpuSet& cpus) {
  const int top =
      cpus.empty() ? 0 : *std::max_element(cpus.begin(), cpus.end());
  std::vector<uint32_t> groups(top / 32 + 1, 0);
  for (int c : cpus) {
    if (c >= 0) groups[c / 32] |= 1u << (c % 32);
  }
  std::vector<std::string> parts;
  for (auto g = groups.rbegin(); g != groups.rend(); ++g) {
    parts.push_back(groups.size() == 1 ? absl::StrFormat("%x", *g)
                                       : absl::StrFormat("%08x", *g));
  }
  return absl::StrJoin(parts, ",");
}

std::vector<PlanStep> BuildQueuePlan(const model::QueueMap& m,
                                     std::vector<std::string>* notes) {
  Planner p{m, notes, {}, {}, {}, {}, {}};
  for (const model::TcpController& c : m.controllers) {
    const model::Netdev* d = model::FindNetdev(m, c.netdev);
    if (d == nullptr) {
      notes->push_back(absl::StrCat(c.name, ": no plan, ", c.netdev_unknown));
      continue;
    }
    int unknown = 0;
    std::vector<Flow> flows;
    for (const model::TcpQueueFlow& f : c.flows) {
      if (f.qid && *f.qid == 0) continue;  // the admin queue carries no I/O
      if (!f.qid || !f.io_cpu) {
        ++unknown;
      } else {
        flows.push_back({&c, &f});
      }
    }
    p.Receive(*d, flows);
    for (const Flow& x : flows) p.Transmit(*d, x);
    if (unknown > 0) {
      notes->push_back(absl::StrCat(
          c.name, ": no per-flow steps for ", unknown,
          " flows whose queue or io_cpu is unknown or unbound (",
          m.bpf_unknown.empty() ? "needs BPF" : m.bpf_unknown, ")"));
    }
  }
  p.Flush(p.rps, /*tx=*/false);
  p.Flush(p.xps, /*tx=*/true);
  for (const model::QueueMismatch& x : m.mismatches) {
    if (x.kind == model::QueueMismatchKind::kOversubscribed) {
      p.Oversubscribed(x);
    }
  }
  return std::move(p.steps);
}

}  // namespace pathwise::control

// SPDX-License-Identifier: Apache-2.0
#include "collectors/queue_mismatch.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"

namespace pathwise::collectors {
namespace {

const model::Irq* FindIrq(const model::Netdev& d, int number) {
  for (const model::Irq& i : d.irqs) {
    if (i.number == number) return &i;
  }
  return nullptr;
}

// The I/O queues of a controller: queue_count - 1 (the admin queue), else
// its hardware contexts.
int IoQueues(const model::TcpController& c) {
  if (c.queue_count && *c.queue_count > 0) return *c.queue_count - 1;
  return static_cast<int>(c.hctxs.size());
}

// Whether a flow is known to be an I/O queue's. The admin queue (qid 0)
// carries admin commands and keep-alives, not I/O: where its IRQ lands or
// which NIC queue it shares costs I/O nothing. Without the qid it may be
// the admin queue's, and Oversubscribed covers such flows.
bool IsIoQueueFlow(const model::TcpQueueFlow& f) { return f.qid && *f.qid > 0; }

}  // namespace

const model::CpuSet& IrqCpus(const model::Irq& irq) {
  return irq.effective_affinity.empty() ? irq.affinity : irq.effective_affinity;
}

std::vector<model::QueueMismatch> RxIrqOffWorker(const model::QueueMap& m) {
  std::vector<model::QueueMismatch> out;
  for (const model::TcpController& c : m.controllers) {
    const model::Netdev* d = model::FindNetdev(m, c.netdev);
    if (d == nullptr) continue;
    for (const model::TcpQueueFlow& f : c.flows) {
      // Kernels differ in whether the admin queue has a worker CPU at all
      // (6.1 gives it one, 6.12 does not): only I/O queues are judged.
      if (!IsIoQueueFlow(f) || !f.io_cpu || !f.rx_queue) continue;
      const auto q = std::find_if(
          d->rx.begin(), d->rx.end(),
          [&](const model::NicQueue& n) { return n.index == *f.rx_queue; });
      if (q == d->rx.end() || !q->irq) continue;
      const model::Irq* irq = FindIrq(*d, *q->irq);
      if (irq == nullptr || IrqCpus(*irq).empty()) continue;
      const model::CpuSet& cpus = IrqCpus(*irq);
      if (std::find(cpus.begin(), cpus.end(), *f.io_cpu) != cpus.end()) {
        continue;
      }
      model::QueueMismatch x;
      x.kind = model::QueueMismatchKind::kRxIrqOffWorker;
      x.controller = c.name;
      x.qid = f.qid;
      x.netdev = d->name;
      x.direction = model::NicDirection::kRx;
      x.nic_queue = f.rx_queue;
      x.io_cpu = f.io_cpu;
      x.irq_cpus = cpus;
      out.push_back(std::move(x));
    }
  }
  return out;
}

std::vector<model::QueueMismatch> SharedNicQueues(const model::QueueMap& m) {
  // (device, direction, queue) -> "controller:qid" of its I/O flows.
  std::map<std::tuple<std::string, model::NicDirection, int>,
           std::vector<std::string>>
      users;
  for (const model::TcpController& c : m.controllers) {
    if (c.netdev.empty()) continue;
    for (const model::TcpQueueFlow& f : c.flows) {
      if (!IsIoQueueFlow(f)) continue;
      const std::string who = absl::StrCat(c.name, ":", *f.qid);
      if (f.tx_queue) {
        users[{c.netdev, model::NicDirection::kTx, *f.tx_queue}].push_back(who);
      }
      if (f.rx_queue) {
        users[{c.netdev, model::NicDirection::kRx, *f.rx_queue}].push_back(who);
      }
    }
  }
  std::vector<model::QueueMismatch> out;
  for (auto& [key, who] : users) {
    if (who.size() < 2) continue;
    model::QueueMismatch x;
    x.kind = model::QueueMismatchKind::kSharedNicQueue;
    x.netdev = std::get<0>(key);
    x.direction = std::get<1>(key);
    x.nic_queue = std::get<2>(key);
    x.queues = std::move(who);
    out.push_back(std::move(x));
  }
  return out;
}

std::vector<model::QueueMismatch> Oversubscribed(const model::QueueMap& m) {
  std::vector<model::QueueMismatch> out;
  for (const model::TcpController& c : m.controllers) {
    const model::Netdev* d = model::FindNetdev(m, c.netdev);
    if (d == nullptr || d->tx.empty() || d->rx.empty()) continue;
    const int pairs = static_cast<int>(std::min(d->tx.size(), d->rx.size()));
    const int io = IoQueues(c);
    if (io <= pairs) continue;
    model::QueueMismatch x;
    x.kind = model::QueueMismatchKind::kOversubscribed;
    x.controller = c.name;
    x.netdev = d->name;
    x.io_queues = io;
    x.nic_queues = pairs;
    out.push_back(std::move(x));
  }
  return out;
}

std::vector<model::QueueMismatch> FindMismatches(const model::QueueMap& m) {
  std::vector<model::QueueMismatch> out = RxIrqOffWorker(m);
  for (auto* rule : {&SharedNicQueues, &Oversubscribed}) {
    std::vector<model::QueueMismatch> more = (*rule)(m);
    out.insert(out.end(), more.begin(), more.end());
  }
  return out;
}

}  // namespace pathwise::collectors

// SPDX-License-Identifier: Apache-2.0
// The tuning plan of `pathwise queues --plan`: shell commands that would
// align each NVMe/TCP I/O queue's flow, NIC queue, IRQ and io_work CPU,
// each with why. Pure: it reads a model::QueueMap and writes text; nothing
// is applied (that is the operator's call).
#ifndef PATHWISE_CONTROL_QUEUE_PLAN_H_
#define PATHWISE_CONTROL_QUEUE_PLAN_H_

#include <string>
#include <vector>

#include "model/queues.h"

namespace pathwise::control {

struct PlanStep {
  std::string command;  // one shell command line
  std::string why;
};

// A CPU set as the hexadecimal mask sysfs takes (32-bit groups, comma
// separated, most significant first: {0, 33} is "00000002,00000001").
std::string CpuMask(const model::CpuSet& cpus);

// The steps, in order: per flow with a known io_cpu, steer its receive
// to that CPU (an ntuple rule to a queue whose IRQ is already there where
// the device has one and several RX queues; else the RX IRQ's affinity;
// RPS on a device without IRQs) and its transmit (XPS: the io_cpu on the
// TX queue whose IRQ is there, or the one it uses); per over-subscribed
// controller, more channels up to the device's maximum (`ethtool -L`, left
// out where the maximum is reached; kept with the maximum said unknown
// where the driver does not report it) and fewer I/O queues (as many as
// the device has, or will have after the channel step, queue pairs).
// `notes` gets what the
// plan cannot cover and why (unknown qids without BPF, ...).
std::vector<PlanStep> BuildQueuePlan(const model::QueueMap& m,
                                     std::vector<std::string>* notes);

}  // namespace pathwise::control

#endif  // PATHWISE_CONTROL_QUEUE_PLAN_H_

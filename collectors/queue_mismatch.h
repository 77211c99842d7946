// SPDX-License-Identifier: Apache-2.0
// The queue map's mismatch rules: where flow, NIC queue, IRQ and io_work
// CPU are not aligned. Pure functions of a model::QueueMap; each rule
// flags only what the map knows (an unknown link flags nothing).
#ifndef PATHWISE_COLLECTORS_QUEUE_MISMATCH_H_
#define PATHWISE_COLLECTORS_QUEUE_MISMATCH_H_

#include <vector>

#include "model/queues.h"

namespace pathwise::collectors {

// The CPUs an IRQ is delivered to: its effective affinity where the
// kernel reports one, else the affinity it was given.
const model::CpuSet& IrqCpus(const model::Irq& irq);

// Flows whose RX queue's IRQ is not affine to their io_cpu.
std::vector<model::QueueMismatch> RxIrqOffWorker(const model::QueueMap& m);

// NIC queues (per device and direction) that carry the flows of two or
// more I/O queues (qid > 0), across controllers.
std::vector<model::QueueMismatch> SharedNicQueues(const model::QueueMap& m);

// Controllers with more I/O queues than their device has queue pairs
// (min of its TX and RX queue counts).
std::vector<model::QueueMismatch> Oversubscribed(const model::QueueMap& m);

// All three, in that order.
std::vector<model::QueueMismatch> FindMismatches(const model::QueueMap& m);

}  // namespace pathwise::collectors

#endif  // PATHWISE_COLLECTORS_QUEUE_MISMATCH_H_

// SPDX-License-Identifier: Apache-2.0
// Per hardware context I/O of the NVMe paths: the block sampler's
// per-(disk, hctx) entries (bpf/sampler.h, SamplerOptions::hctx_slots)
// joined into the queue map's terms (model::PathHctxIo), with each
// hardware context's CPUs from sysfs (/sys/block/<disk>/mq/<n>/cpu_list).
#ifndef PATHWISE_COLLECTORS_QUEUE_HCTX_H_
#define PATHWISE_COLLECTORS_QUEUE_HCTX_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "bpf/sampler.h"
#include "collectors/sysfs_reader.h"
#include "model/queues.h"

namespace pathwise::collectors {

// The controller of an NVMe namespace disk: nvme0c1n1 -> nvme1 (the path's
// controller), nvme0n1 -> nvme0; "" for any other disk.
std::string NvmeDiskController(absl::string_view disk);

// The NVMe disks' entries of `s`, one PathHctxIo per disk name (instances
// of one name summed), hardware contexts by index, paths by natural order
// of their names. Other disks (loop, sd, ...) are left out. Pure.
std::vector<model::PathHctxIo> HctxByPath(const bpf::SamplerSnapshot& s);

// Each hardware context's CPUs from block/<path>/mq/<index>/cpu_list; left
// empty where unreadable.
void AddHctxCpus(const SysfsReader& sys, std::vector<model::PathHctxIo>& paths);

// The hardware contexts of every block device now (block/*/mq/*): what
// bpf::HctxSlotsFor sizes the slots by.
int CountHctxs(const SysfsReader& sys);

// The block devices now (block/*, hidden NVMe path disks included): what
// bpf::IoSlotsFor sizes the I/O slots by.
int CountDisks(const SysfsReader& sys);

// Moves the per-hctx part of a queue map (hctx_io and the fields after it)
// from `from` into `to`.
void MoveHctxIo(model::QueueMap& from, model::QueueMap& to);

}  // namespace pathwise::collectors

#endif  // PATHWISE_COLLECTORS_QUEUE_HCTX_H_

// SPDX-License-Identifier: Apache-2.0
// BpfIoCollector: I/O statistics from the eBPF path sampler
// (bpf/sampler.h). Each interval it reads the sampler's per-CPU
// maps and joins them with the topology the topology source just built:
//  - per path (hidden disk nvmeXcYnZ): completed, bytes, latency histogram
//    per op (passthru included), NVMe error classes, retries, failovers;
//  - per head: the exact merge of its paths (each I/O is counted once, at
//    the path request; the head itself is bio-based and has no requests);
//  - with DeviceScope::kAll, every other block device (loop, sd, ...) by
//    its disk name.
// The join is by disk name, recorded by the kernel side when a disk
// instance's (dev_t, diskseq) first entry is created: hidden path disks
// have no dev_t in sysfs.
#ifndef PATHWISE_COLLECTORS_BPF_IO_COLLECTOR_H_
#define PATHWISE_COLLECTORS_BPF_IO_COLLECTOR_H_

#include <memory>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "bpf/sampler.h"
#include "collectors/collector.h"
#include "model/topology.h"

namespace pathwise::collectors {

// Which block devices the BPF collector exports.
enum class DeviceScope {
  kNvme,  // NVMe paths and heads only
  kAll,   // also every other block device, as pathwise_device_io_*
};

// Whether `name` is a hidden NVMe multipath path disk (nvme0c1n1).
bool IsNvmePathDiskName(absl::string_view name);

// Joins `samples` with `topology` and fills io's path_io, head_io,
// path_nvme, device_io (kAll only), sampler and io_source (kBpf).
// Pure: no BPF, no I/O. Every topology path and head gets read and write
// series (zero until it does I/O), other ops once they occur.
void JoinBpfSamples(const bpf::SamplerSnapshot& samples, DeviceScope scope,
                    const model::Topology& topology, model::IoReading& io);

class BpfIoCollector : public IoSource {
 public:
  BpfIoCollector(std::unique_ptr<bpf::BpfSampler> sampler, DeviceScope scope)
      : sampler_(std::move(sampler)), scope_(scope) {}

  absl::string_view name() const override { return "bpf_io"; }
  absl::Status Read(const model::Topology& topology,
                    model::IoReading& io) override;

 private:
  std::unique_ptr<bpf::BpfSampler> sampler_;  // detaches on destruction
  DeviceScope scope_;
  bpf::NvmeAttachState nvme_state_ = bpf::NvmeAttachState::kDisabled;
};

}  // namespace pathwise::collectors

#endif  // PATHWISE_COLLECTORS_BPF_IO_COLLECTOR_H_

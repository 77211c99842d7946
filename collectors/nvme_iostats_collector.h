// SPDX-License-Identifier: Apache-2.0
// NvmeIoStatsCollector: the sysfs fallback for I/O statistics. Reads
// /sys/block/<dev>/stat for every path and head in the topology the
// topology source just built, and marks the I/O source as "sysfs". The BPF
// sampler replaces it when it can run.
#ifndef PATHWISE_COLLECTORS_NVME_IOSTATS_COLLECTOR_H_
#define PATHWISE_COLLECTORS_NVME_IOSTATS_COLLECTOR_H_

#include <string_view>

#include "absl/strings/string_view.h"
#include "collectors/collector.h"
#include "collectors/sysfs_reader.h"

namespace pathwise::collectors {

class NvmeIoStatsCollector : public IoSource {
 public:
  explicit NvmeIoStatsCollector(SysfsReader reader)
      : reader_(std::move(reader)) {}

  absl::string_view name() const override { return "nvme_iostats"; }
  absl::Status Read(const model::Topology& topology,
                    model::IoReading& io) override;

 private:
  SysfsReader reader_;
};

}  // namespace pathwise::collectors

#endif  // PATHWISE_COLLECTORS_NVME_IOSTATS_COLLECTOR_H_

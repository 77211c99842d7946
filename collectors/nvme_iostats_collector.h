// NvmeIoStatsCollector: the sysfs fallback for I/O statistics. Reads
// /sys/block/<dev>/stat for every path and head in the topology the
// topology collector just built, and marks the snapshot's I/O source as
// "sysfs". The BPF sampler (issue 4) replaces it when it can run.
#ifndef PATHWISE_COLLECTORS_NVME_IOSTATS_COLLECTOR_H_
#define PATHWISE_COLLECTORS_NVME_IOSTATS_COLLECTOR_H_

#include <string_view>

#include "absl/strings/string_view.h"
#include "collectors/collector.h"
#include "collectors/sysfs_reader.h"

namespace pathwise::collectors {

class NvmeIoStatsCollector : public Collector {
 public:
  explicit NvmeIoStatsCollector(SysfsReader reader)
      : reader_(std::move(reader)) {}

  absl::string_view name() const override { return "nvme_iostats"; }
  absl::Status Collect(model::Snapshot& snapshot) override;

 private:
  SysfsReader reader_;
};

}  // namespace pathwise::collectors

#endif  // PATHWISE_COLLECTORS_NVME_IOSTATS_COLLECTOR_H_

// SPDX-License-Identifier: Apache-2.0
#include "collectors/nvme_iostats_collector.h"

#include "absl/strings/str_cat.h"
#include "collectors/block_stat.h"

namespace pathwise::collectors {

absl::Status NvmeIoStatsCollector::Read(const model::Topology& topology,
                                        model::IoReading& io) {
  ErrorList errors;
  auto read = [&](const std::string& dev,
                  std::map<std::string, model::IoStats, std::less<>>& out) {
    const std::string rel = absl::StrCat("block/", dev, "/stat");
    absl::StatusOr<std::string> text = reader_.ReadAttr(rel);
    if (!text.ok()) {
      errors.Add(text.status());
      return;
    }
    absl::StatusOr<model::IoStats> stats = ParseBlockStat(*text);
    if (!stats.ok()) {
      errors.Add(absl::InvalidArgumentError(
          absl::StrCat(rel, ": ", stats.status().message())));
      return;
    }
    out[dev] = *stats;
  };
  for (const model::Path& p : topology.paths) read(p.name, io.path_io);
  for (const model::Head& h : topology.heads) read(h.name, io.head_io);
  if (io.io_source == model::IoSource::kNone) {
    io.io_source = model::IoSource::kSysfs;
  }
  return errors.ToStatus();
}

}  // namespace pathwise::collectors

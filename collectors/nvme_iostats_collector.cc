#include "collectors/nvme_iostats_collector.h"

#include "absl/strings/str_cat.h"
#include "collectors/block_stat.h"

namespace pathwise::collectors {

absl::Status NvmeIoStatsCollector::Collect(model::Snapshot& snapshot) {
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
  for (const model::Path& p : snapshot.topology.paths)
    read(p.name, snapshot.path_io);
  for (const model::Head& h : snapshot.topology.heads)
    read(h.name, snapshot.head_io);
  if (snapshot.io_source.empty()) snapshot.io_source = "sysfs";
  return errors.ToStatus();
}

}  // namespace pathwise::collectors

#include "collectors/collector.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace pathwise::collectors {

void IoReading::MoveInto(model::Snapshot& snapshot) && {
  snapshot.path_io = std::move(path_io);
  snapshot.head_io = std::move(head_io);
  snapshot.path_nvme = std::move(path_nvme);
  snapshot.device_io = std::move(device_io);
  snapshot.sampler = std::move(sampler);
  snapshot.io_source = std::move(io_source);
}

void ErrorList::Add(const absl::Status& status) {
  if (status.ok()) return;
  if (count_ == 0) first_ = status;
  ++count_;
}

absl::Status ErrorList::ToStatus() const {
  if (count_ == 0) return absl::OkStatus();
  if (count_ == 1) return first_;
  return absl::Status(first_.code(), absl::StrCat(first_.message(), " (and ",
                                                  count_ - 1, " more)"));
}

}  // namespace pathwise::collectors

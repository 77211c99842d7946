// SPDX-License-Identifier: Apache-2.0
#include "collectors/collector.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace pathwise::collectors {

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

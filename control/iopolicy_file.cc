// SPDX-License-Identifier: Apache-2.0
#include "control/iopolicy_file.h"

#include "absl/strings/str_cat.h"
#include "control/sysfs_attr.h"

namespace pathwise::control {

std::string SysfsIopolicyFile::PathOf(absl::string_view subsystem) const {
  return absl::StrCat(root_, "/class/nvme-subsystem/", subsystem, "/iopolicy");
}

absl::StatusOr<std::string> SysfsIopolicyFile::Read(
    absl::string_view subsystem) {
  return ReadSysfsAttr(PathOf(subsystem));
}

absl::Status SysfsIopolicyFile::Write(absl::string_view subsystem,
                                      absl::string_view policy) {
  return WriteSysfsAttr(PathOf(subsystem), policy);
}

}  // namespace pathwise::control

// SPDX-License-Identifier: Apache-2.0
// Reading and writing one sysfs attribute, as the actuators do: the value
// without its newline, and one write(2) of the whole value to an existing
// file (never created). Errors name the file and the errno's text.
#ifndef PATHWISE_CONTROL_SYSFS_ATTR_H_
#define PATHWISE_CONTROL_SYSFS_ATTR_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace pathwise::control {

absl::StatusOr<std::string> ReadSysfsAttr(const std::string& path);

// A value the kernel rejects keeps the errno's code (EINVAL:
// InvalidArgument).
absl::Status WriteSysfsAttr(const std::string& path, absl::string_view value);

}  // namespace pathwise::control

#endif  // PATHWISE_CONTROL_SYSFS_ATTR_H_

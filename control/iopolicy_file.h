// SPDX-License-Identifier: Apache-2.0
// Where the iopolicy actuator reads and writes a subsystem's iopolicy: an
// interface so the actuator is tested without root and without a kernel
// (a fake that refuses), and its sysfs implementation.
#ifndef PATHWISE_CONTROL_IOPOLICY_FILE_H_
#define PATHWISE_CONTROL_IOPOLICY_FILE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace pathwise::control {

class IopolicyFile {
 public:
  virtual ~IopolicyFile() = default;
  // The subsystem's iopolicy as the kernel spells it, without the newline.
  virtual absl::StatusOr<std::string> Read(absl::string_view subsystem) = 0;
  // Writes `policy` (the kernel's spelling). A policy the kernel does not
  // offer is an InvalidArgument error (EINVAL); any other failure is
  // another code, with the file and the errno text in the message.
  virtual absl::Status Write(absl::string_view subsystem,
                             absl::string_view policy) = 0;
};

// <sysfs_root>/class/nvme-subsystem/<subsystem>/iopolicy. Writing needs
// write access to that file (root, and sysfs mounted read-write); the file
// is never created.
class SysfsIopolicyFile : public IopolicyFile {
 public:
  explicit SysfsIopolicyFile(std::string sysfs_root)
      : root_(std::move(sysfs_root)) {}

  std::string PathOf(absl::string_view subsystem) const;
  absl::StatusOr<std::string> Read(absl::string_view subsystem) override;
  absl::Status Write(absl::string_view subsystem,
                     absl::string_view policy) override;

 private:
  std::string root_;
};

}  // namespace pathwise::control

#endif  // PATHWISE_CONTROL_IOPOLICY_FILE_H_

// SPDX-License-Identifier: Apache-2.0
#include "control/sysfs_attr.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace pathwise::control {
namespace {

// "WHAT PATH: <strerror>": ErrnoToStatus appends the errno's text.
absl::Status Errno(int err, absl::string_view what, const std::string& path) {
  return absl::ErrnoToStatus(err, absl::StrCat(what, " ", path));
}

}  // namespace

absl::StatusOr<std::string> ReadSysfsAttr(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Errno(errno, "cannot open", path);
  char buf[64];
  const ssize_t n = read(fd, buf, sizeof(buf));
  const int err = errno;
  close(fd);
  if (n < 0) return Errno(err, "cannot read", path);
  return std::string(absl::StripAsciiWhitespace(absl::string_view(buf, n)));
}

absl::Status WriteSysfsAttr(const std::string& path, absl::string_view value) {
  // No O_CREAT: only an existing attribute is written. O_TRUNC matters only
  // to a plain file (a test tree); sysfs ignores it.
  const int fd = open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return Errno(errno, "cannot open", path);
  // One write(2) of the whole value: sysfs takes a store in one call.
  const ssize_t n = write(fd, value.data(), value.size());
  const int err = errno;
  if (close(fd) != 0 && n >= 0) return Errno(errno, "cannot write", path);
  if (n < 0) return Errno(err, "cannot write", path);
  if (static_cast<size_t>(n) != value.size()) {
    return absl::DataLossError(absl::StrCat("short write to ", path));
  }
  return absl::OkStatus();
}

}  // namespace pathwise::control

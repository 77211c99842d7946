// SPDX-License-Identifier: Apache-2.0
#include "datapath/ublk/scheduler.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "collectors/sysfs_reader.h"

namespace pathwise::datapath::ublk {
namespace {

// Written directly: SysfsReader only reads.
std::string AttributePath(const std::string& sysfs_root,
                          const std::string& disk) {
  return absl::StrCat(sysfs_root, "/block/", disk, "/queue/scheduler");
}

}  // namespace

absl::Status ValidateSchedulerName(absl::string_view name) {
  bool ok = !name.empty() && name.size() <= 32;
  for (char c : name) {
    ok = ok && (absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '-' ||
                c == '_');
  }
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("--scheduler must be an I/O scheduler's name (none, "
                   "mq-deadline, ...) or ",
                   kKernelScheduler, ", not '", name, "'"));
}

absl::StatusOr<std::string> ActiveScheduler(absl::string_view attribute) {
  const absl::string_view text = absl::StripAsciiWhitespace(attribute);
  const size_t open = text.find('[');
  if (open == absl::string_view::npos) {
    // A device without an elevator choice lists "none" alone.
    if (!text.empty() && text.find_first_of(" \t") == absl::string_view::npos) {
      return std::string(text);
    }
    return absl::DataLossError(
        absl::StrCat("no scheduler in brackets in '", text, "'"));
  }
  const size_t close = text.find(']', open);
  if (close == absl::string_view::npos || close == open + 1) {
    return absl::DataLossError(
        absl::StrCat("unbalanced brackets in '", text, "'"));
  }
  return std::string(text.substr(open + 1, close - open - 1));
}

absl::StatusOr<std::string> ReadScheduler(const std::string& sysfs_root,
                                          const std::string& disk) {
  const std::string rel = absl::StrCat("block/", disk, "/queue/scheduler");
  absl::StatusOr<std::string> text =
      collectors::SysfsReader(sysfs_root).ReadAttr(rel);
  if (!text.ok()) return text.status();
  absl::StatusOr<std::string> active = ActiveScheduler(*text);
  if (!active.ok()) {
    return absl::DataLossError(
        absl::StrCat(rel, ": ", active.status().message()));
  }
  return active;
}

absl::StatusOr<std::string> SetScheduler(const std::string& sysfs_root,
                                         const std::string& disk,
                                         const std::string& name) {
  const std::string path = AttributePath(sysfs_root, disk);
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("open ", path));
  const ssize_t n = write(fd, name.data(), name.size());
  const int write_errno = errno;
  close(fd);
  if (n < 0) {
    return absl::ErrnoToStatus(write_errno,
                               absl::StrCat("write '", name, "' to ", path));
  }
  return ReadScheduler(sysfs_root, disk);
}

}  // namespace pathwise::datapath::ublk

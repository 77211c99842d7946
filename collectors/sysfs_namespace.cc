// SPDX-License-Identifier: Apache-2.0
#include "collectors/sysfs_namespace.h"

#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace pathwise::collectors {
namespace {

absl::Status Errno(absl::string_view what) {
  const int err = errno;
  return absl::FailedPreconditionError(
      absl::StrCat(what, ": ", std::strerror(err),
                   err == EPERM ? " (needs CAP_SYS_ADMIN)" : ""));
}

}  // namespace

absl::Status EnterPrivateMountNamespace() {
  if (unshare(CLONE_NEWNS) != 0) return Errno("unshare(CLONE_NEWNS)");
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return Errno("making / private");
  }
  return absl::OkStatus();
}

absl::Status BindOverSys(const std::string& root) {
  struct stat st;
  if (stat(root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::NotFoundError(
        absl::StrCat("sysfs root ", root, " is not a directory"));
  }
  if (mount(root.c_str(), "/sys", nullptr, MS_BIND | MS_REC, nullptr) != 0) {
    return Errno(absl::StrCat("binding ", root, " over /sys"));
  }
  return absl::OkStatus();
}

absl::Status UnbindSys() {
  if (umount2("/sys", MNT_DETACH) != 0) return Errno("unmounting /sys");
  return absl::OkStatus();
}

absl::Status PresentSysfsRoot(const std::string& root) {
  std::error_code ec;
  const std::filesystem::path canon = std::filesystem::canonical(root, ec);
  if (ec) {
    return absl::NotFoundError(
        absl::StrCat("sysfs root ", root, ": ", ec.message()));
  }
  if (canon == "/sys") return absl::OkStatus();
  if (absl::Status s = EnterPrivateMountNamespace(); !s.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot present --path.sysfs=", root, " at /sys: ", s.message()));
  }
  return BindOverSys(canon.string());
}

}  // namespace pathwise::collectors

// SPDX-License-Identifier: Apache-2.0
#include "collectors/sysfs_reader.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "model/topology.h"

namespace pathwise::collectors {
namespace {

absl::Status ErrnoStatus(int err, absl::string_view rel) {
  std::string msg = absl::StrCat(rel, ": ", std::strerror(err));
  if (err == ENOENT || err == ENOTDIR) return absl::NotFoundError(msg);
  return absl::UnavailableError(msg);
}

}  // namespace

SysfsReader::SysfsReader(std::string root) : root_(std::move(root)) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
}

std::string SysfsReader::Path(absl::string_view rel) const {
  return absl::StrCat(root_, "/", rel);
}

absl::StatusOr<std::string> SysfsReader::ReadAttr(absl::string_view rel) const {
  const std::string path = Path(rel);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, rel);
  std::string out;
  char buf[4096];
  while (true) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      close(fd);
      return ErrnoStatus(err, rel);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > (1u << 20)) {
      close(fd);
      return absl::OutOfRangeError(absl::StrCat(rel, ": larger than 1 MiB"));
    }
  }
  close(fd);
  absl::StripTrailingAsciiWhitespace(&out);
  return out;
}

absl::StatusOr<int64_t> ParseInt(absl::string_view text) {
  int64_t v = 0;
  absl::string_view t = absl::StripAsciiWhitespace(text);
  if (t.empty() || !absl::SimpleAtoi(t, &v)) {
    return absl::InvalidArgumentError(
        absl::StrCat("not an integer: \"", text.substr(0, 64), "\""));
  }
  return v;
}

absl::StatusOr<int64_t> SysfsReader::ReadInt(absl::string_view rel) const {
  absl::StatusOr<std::string> text = ReadAttr(rel);
  if (!text.ok()) return text.status();
  absl::StatusOr<int64_t> v = ParseInt(*text);
  if (!v.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(rel, ": ", v.status().message()));
  }
  return v;
}

absl::StatusOr<std::vector<std::string>> SysfsReader::ListDir(
    absl::string_view rel) const {
  const std::string path = Path(rel);
  DIR* d = opendir(path.c_str());
  if (d == nullptr) return ErrnoStatus(errno, rel);
  std::vector<std::string> names;
  while (struct dirent* e = readdir(d)) {
    absl::string_view n = e->d_name;
    if (n == "." || n == "..") continue;
    names.emplace_back(n);
  }
  closedir(d);
  std::sort(names.begin(), names.end(), model::NaturalLess);
  return names;
}

bool SysfsReader::Exists(absl::string_view rel) const {
  struct stat st;
  return stat(Path(rel).c_str(), &st) == 0;
}

}  // namespace pathwise::collectors

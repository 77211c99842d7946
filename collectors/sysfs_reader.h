// SPDX-License-Identifier: Apache-2.0
// SysfsReader: the one place that reads sysfs attributes and directories
// (the topology walk, block stat files, diag/ counters, ...). The root is a
// value passed in (node_exporter's
// --path.sysfs habit), never global state, so tests and containers can point
// it anywhere.
#ifndef PATHWISE_COLLECTORS_SYSFS_READER_H_
#define PATHWISE_COLLECTORS_SYSFS_READER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace pathwise::collectors {

class SysfsReader {
 public:
  explicit SysfsReader(std::string root);

  const std::string& root() const { return root_; }

  // Absolute path of `rel` (relative to the root, e.g. "block/nvme0n1/stat").
  std::string Path(absl::string_view rel) const;

  // The attribute's content with trailing whitespace/newlines removed.
  // NotFound if it does not exist; errors carry `rel` in their message.
  absl::StatusOr<std::string> ReadAttr(absl::string_view rel) const;

  // A decimal (optionally negative) integer attribute.
  absl::StatusOr<int64_t> ReadInt(absl::string_view rel) const;

  // Entry names of a directory (no "." / ".."), sorted naturally.
  absl::StatusOr<std::vector<std::string>> ListDir(absl::string_view rel) const;

  bool Exists(absl::string_view rel) const;

 private:
  std::string root_;
};

// Parses a whole decimal integer ("42", "-1"); InvalidArgument otherwise.
absl::StatusOr<int64_t> ParseInt(absl::string_view text);

}  // namespace pathwise::collectors

#endif  // PATHWISE_COLLECTORS_SYSFS_READER_H_

// SPDX-License-Identifier: Apache-2.0
// A Backend over a regular file (or any file pread/pwrite works on), for
// tests and for trying the front end: reads, writes, fdatasync for flush,
// RWF_DSYNC for FUA, hole punching for discard and write-zeroes. It shares
// each queue's io_uring, the way the NVMe passthru backend will.
#ifndef PATHWISE_DATAPATH_UBLK_FILE_BACKEND_H_
#define PATHWISE_DATAPATH_UBLK_FILE_BACKEND_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "datapath/ublk/backend.h"

namespace pathwise::datapath::ublk {

class FileBackend final : public Backend {
 public:
  // The device is the file's size rounded down to 4 KiB; with
  // size_bytes > 0 the file is created or resized to that first.
  static absl::StatusOr<std::unique_ptr<FileBackend>> Open(
      const std::string& path, uint64_t size_bytes = 0);
  ~FileBackend() override;

  Geometry geometry() const override { return geometry_; }
  absl::StatusOr<std::unique_ptr<QueueBackend>> AttachQueue(
      QueueContext& context) override;

 private:
  FileBackend(int fd, const Geometry& geometry);
  int fd_;
  Geometry geometry_;
};

}  // namespace pathwise::datapath::ublk

#endif  // PATHWISE_DATAPATH_UBLK_FILE_BACKEND_H_

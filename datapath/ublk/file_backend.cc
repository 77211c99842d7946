// SPDX-License-Identifier: Apache-2.0
#include "datapath/ublk/file_backend.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "absl/strings/str_cat.h"

namespace pathwise::datapath::ublk {
namespace {

// One request in flight per tag. The cookie carries the tag and a
// generation, so that a CQE of a cancelled request is told apart from one
// of the tag's next request.
class FileQueue final : public QueueBackend {
 public:
  FileQueue(int fd, QueueContext& context, size_t depth)
      : fd_(fd), context_(context), slots_(depth) {}

  void Submit(const IoRequest& request) override {
    Slot& s = slots_.at(request.tag);
    s.request = request;
    s.done = 0;
    s.active = true;
    Issue(request.tag);
  }

  void OnCqe(const io_uring_cqe& cqe) override {
    const uint64_t cookie = cqe.user_data & ~QueueContext::kBackendBit;
    const auto tag = static_cast<uint16_t>(cookie & 0xffff);
    if (tag >= slots_.size()) return;
    Slot& s = slots_[tag];
    if (!s.active || (cookie >> 16) != s.generation) return;  // cancelled
    const IoRequest& r = s.request;
    if (cqe.res < 0) {
      Finish(tag, cqe.res);
      return;
    }
    if (r.op != IoOp::kRead && r.op != IoOp::kWrite) {
      Finish(tag, 0);
      return;
    }
    if (cqe.res == 0) {
      // End of file inside the device: only if the file shrank under us.
      Finish(tag, s.done > 0 ? static_cast<int32_t>(s.done) : -EIO);
      return;
    }
    s.done += static_cast<uint32_t>(cqe.res);
    if (s.done >= r.length) {
      Finish(tag, static_cast<int32_t>(r.length));
    } else {
      Issue(tag);  // a short transfer: the rest
    }
  }

  void Cancel(uint16_t tag) override {
    if (tag >= slots_.size()) return;
    slots_[tag].active = false;
    ++slots_[tag].generation;
  }

 private:
  struct Slot {
    IoRequest request;
    uint32_t done = 0;
    uint64_t generation = 0;
    bool active = false;
  };

  void Finish(uint16_t tag, int32_t result) {
    Slot& s = slots_[tag];
    s.active = false;
    ++s.generation;
    context_.Complete(tag, result);
  }

  void Issue(uint16_t tag) {
    Slot& s = slots_[tag];
    const IoRequest& r = s.request;
    io_uring_sqe* sqe = context_.GetSqe();
    if (sqe == nullptr) {
      Finish(tag, -EIO);
      return;
    }
    switch (r.op) {
      case IoOp::kRead:
        io_uring_prep_read(sqe, fd_, r.buffer.data() + s.done,
                           r.length - s.done, r.offset + s.done);
        break;
      case IoOp::kWrite:
        io_uring_prep_write(sqe, fd_, r.buffer.data() + s.done,
                            r.length - s.done, r.offset + s.done);
        if (r.fua) sqe->rw_flags = RWF_DSYNC;
        break;
      case IoOp::kFlush:
        io_uring_prep_fsync(sqe, fd_, IORING_FSYNC_DATASYNC);
        break;
      case IoOp::kDiscard:
      case IoOp::kWriteZeroes:
        // A hole reads back as zeroes, which is what both promise here.
        io_uring_prep_fallocate(sqe, fd_,
                                FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                                r.offset, r.length);
        break;
    }
    sqe->user_data = QueueContext::BackendUserData((s.generation << 16) | tag);
  }

  const int fd_;
  QueueContext& context_;
  std::vector<Slot> slots_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<FileBackend>> FileBackend::Open(
    const std::string& path, uint64_t size_bytes) {
  const int flags = O_RDWR | O_CLOEXEC | (size_bytes > 0 ? O_CREAT : 0);
  const int fd = open(path.c_str(), flags, 0600);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("open ", path));
  if (size_bytes > 0 && ftruncate(fd, static_cast<off_t>(size_bytes)) != 0) {
    const int err = errno;
    close(fd);
    return absl::ErrnoToStatus(err, absl::StrCat("resize ", path));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    close(fd);
    return absl::ErrnoToStatus(err, absl::StrCat("stat ", path));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is not a regular file"));
  }
  Geometry g;
  g.size_bytes = static_cast<uint64_t>(st.st_size) & ~uint64_t{4095};
  if (g.size_bytes == 0) {
    close(fd);
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is smaller than 4 KiB"));
  }
  g.logical_block_shift = 9;
  g.physical_block_shift = 12;
  // Writes land in the page cache: flush and FUA are real.
  g.volatile_cache = true;
  g.fua = true;
  g.discard = true;
  g.write_zeroes = true;
  return std::unique_ptr<FileBackend>(new FileBackend(fd, g));
}

FileBackend::FileBackend(int fd, const Geometry& geometry)
    : fd_(fd), geometry_(geometry) {}

FileBackend::~FileBackend() { close(fd_); }

absl::StatusOr<std::unique_ptr<QueueBackend>> FileBackend::AttachQueue(
    QueueContext& context) {
  return std::make_unique<FileQueue>(fd_, context, context.depth());
}

}  // namespace pathwise::datapath::ublk

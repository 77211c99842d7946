// SPDX-License-Identifier: Apache-2.0
#include "datapath/nvme_backend.h"

#include <fcntl.h>
#include <linux/nvme_ioctl.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>

#include "absl/strings/str_cat.h"
#include "datapath/nvme_queue.h"
#include "nvme/io.h"

namespace pathwise::datapath {
namespace {

int64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

uint64_t MinNonZero(uint64_t a, uint64_t b) {
  if (a == 0) return b;
  if (b == 0) return a;
  return std::min(a, b);
}

}  // namespace

absl::StatusOr<GroupLimits> LimitsOf(const NamespaceGroup& group,
                                     uint32_t max_io_bytes_cap) {
  if (group.paths.empty()) {
    return absl::InvalidArgumentError("a namespace without paths");
  }
  const NamespacePath& first = group.paths.front();
  GroupLimits l;
  ublk::Geometry& g = l.geometry;
  const uint32_t lbs = first.logical_block_size;
  if (!std::has_single_bit(lbs) || lbs < 512 || lbs > 4096) {
    return absl::FailedPreconditionError(
        absl::StrCat(first.name, ": logical block size ", lbs,
                     " is not one ublk serves (512..4096)"));
  }
  g.logical_block_shift = static_cast<uint8_t>(std::countr_zero(lbs));
  const uint32_t pbs = std::clamp<uint32_t>(
      std::bit_floor(std::max(first.physical_block_size, 1u)), lbs, 4096);
  g.physical_block_shift = static_cast<uint8_t>(std::countr_zero(pbs));
  g.size_bytes = first.size_sectors * 512;
  if (g.size_bytes == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(first.name, " has size 0"));
  }
  uint64_t max_io = max_io_bytes_cap;
  g.discard = g.write_zeroes = true;
  g.fua = true;
  for (const NamespacePath& p : group.paths) {
    if (p.size_sectors != first.size_sectors ||
        p.logical_block_size != first.logical_block_size) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the paths of ", group.id, " disagree on size or block size (",
          first.name, " and ", p.name, ")"));
    }
    if (p.max_hw_sectors_kb > 0) {
      max_io = std::min<uint64_t>(max_io, uint64_t{p.max_hw_sectors_kb} * 1024);
    }
    // A buffer of N pages may need N+1 segments when not page aligned; ours
    // are, but the driver's count includes that spare.
    if (p.max_segments > 1) {
      max_io = std::min<uint64_t>(max_io, uint64_t{p.max_segments - 1} * 4096);
    }
    g.discard = g.discard && p.discard_max_hw_bytes > 0;
    g.write_zeroes = g.write_zeroes && p.write_zeroes_max_bytes > 0;
    g.max_discard_bytes =
        MinNonZero(g.max_discard_bytes, p.discard_max_hw_bytes);
    g.max_write_zeroes_bytes =
        MinNonZero(g.max_write_zeroes_bytes, p.write_zeroes_max_bytes);
    g.volatile_cache = g.volatile_cache || p.volatile_cache;
    g.fua = g.fua && p.fua;
  }
  g.fua = g.fua && g.volatile_cache;
  // One Write Zeroes command carries at most 64 Ki blocks.
  g.max_write_zeroes_bytes =
      MinNonZero(g.max_write_zeroes_bytes,
                 uint64_t{nvme::kMaxBlocksPerCommand} << g.logical_block_shift);
  max_io = std::max<uint64_t>(max_io & ~uint64_t{4095}, 4096);
  l.max_io_bytes = static_cast<uint32_t>(max_io);
  return l;
}

NvmeBackend::NvmeBackend(const NamespaceGroup& group,
                         const BackendOptions& options,
                         const GroupLimits& limits)
    : group_(group),
      options_(options),
      limits_(limits),
      paths_(static_cast<int>(group.paths.size()), options.retry),
      selector_(options.policy, options.params, Now()) {}

NvmeBackend::~NvmeBackend() {
  for (int fd : fds_) close(fd);
}

absl::StatusOr<std::unique_ptr<NvmeBackend>> NvmeBackend::Open(
    const NamespaceGroup& group, const BackendOptions& options) {
  absl::StatusOr<GroupLimits> limits =
      LimitsOf(group, options.max_io_bytes_cap);
  if (!limits.ok()) return limits.status();
  std::unique_ptr<NvmeBackend> b(new NvmeBackend(group, options, *limits));
  for (const NamespacePath& p : group.paths) {
    const std::string dev = absl::StrCat(options.dev_dir, "/", p.generic);
    const int fd = open(dev.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("open ", dev));
    b->fds_.push_back(fd);
    const int id = ioctl(fd, NVME_IOCTL_ID);
    if (id <= 0 && p.nsid == 0) {
      return absl::ErrnoToStatus(errno, absl::StrCat("NVME_IOCTL_ID on ", dev));
    }
    b->nsids_.push_back(id > 0 ? static_cast<uint32_t>(id) : p.nsid);
  }
  return b;
}

int64_t NvmeBackend::Now() const {
  return options_.clock ? options_.clock() : NowNs();
}

ublk::RingNeeds NvmeBackend::ring_needs() const {
  // A timer besides one command per request. Registered buffers: the
  // passthru command then maps no user pages per I/O.
  return {.sqe128 = true,
          .cqe32 = true,
          .sqes_per_request = 2,
          .fixed_buffers = true};
}

absl::StatusOr<std::unique_ptr<ublk::QueueBackend>> NvmeBackend::AttachQueue(
    ublk::QueueContext& context) {
  const int r = io_uring_register_files(context.ring(), fds_.data(),
                                        static_cast<unsigned>(fds_.size()));
  if (r < 0) {
    return absl::ErrnoToStatus(
        -r, absl::StrCat("registering the ng devices on queue ",
                         context.queue_id()));
  }
  return std::make_unique<NvmeQueue>(*this, context);
}

int64_t NvmeBackend::RetryDelayNs(int path, uint8_t crd) const {
  if (crd == 0 || path < 0 ||
      static_cast<size_t>(path) >= retry_delay_times_.size()) {
    return 0;
  }
  return std::min(nvme::RetryDelayNs(crd, retry_delay_times_[path]),
                  options_.retry.max_retry_delay_ns);
}

void NvmeBackend::Publish(int queue, const DatapathStats& stats) {
  absl::MutexLock l(&mu_);
  if (published_.size() <= static_cast<size_t>(queue)) {
    published_.resize(static_cast<size_t>(queue) + 1);
  }
  published_[queue] = stats;
}

DatapathStats NvmeBackend::Stats() const {
  DatapathStats sum;
  sum.paths.resize(group_.paths.size());
  absl::MutexLock l(&mu_);
  for (const DatapathStats& q : published_) sum.Merge(q);
  return sum;
}

}  // namespace pathwise::datapath

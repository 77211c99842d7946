// SPDX-License-Identifier: Apache-2.0
#include "datapath/ublk/params.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "datapath/ublk/scheduler.h"

namespace pathwise::datapath::ublk {
namespace {

constexpr uint32_t kSectorShift = 9;

size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

}  // namespace

const char* IoOpName(IoOp op) {
  switch (op) {
    case IoOp::kRead:
      return "read";
    case IoOp::kWrite:
      return "write";
    case IoOp::kFlush:
      return "flush";
    case IoOp::kDiscard:
      return "discard";
    case IoOp::kWriteZeroes:
      return "write_zeroes";
  }
  return "?";
}

absl::Status ValidateOptions(const DeviceOptions& options,
                             const Geometry& geometry) {
  if (options.queues < 1 || options.queues > 64) {
    return absl::InvalidArgumentError(
        absl::StrCat("queues must be 1..64, not ", options.queues));
  }
  if (options.depth < 1 || options.depth > UBLK_MAX_QUEUE_DEPTH) {
    return absl::InvalidArgumentError(absl::StrCat(
        "depth must be 1..", UBLK_MAX_QUEUE_DEPTH, ", not ", options.depth));
  }
  if (absl::Status s = ValidateSchedulerName(options.scheduler); !s.ok()) {
    return s;
  }
  if (options.max_io_bytes < 4096 || options.max_io_bytes % 4096 != 0 ||
      options.max_io_bytes > (32u << 20)) {
    return absl::InvalidArgumentError(
        absl::StrCat("max I/O size must be a multiple of 4096 up to 32 MiB, "
                     "not ",
                     options.max_io_bytes));
  }
  // The kernel's own checks (ublk_validate_params), said in our words.
  if (geometry.logical_block_shift < 9 || geometry.logical_block_shift > 12) {
    return absl::InvalidArgumentError(absl::StrCat("logical block size 2^",
                                                   geometry.logical_block_shift,
                                                   " is not 512..4096"));
  }
  if (geometry.physical_block_shift < geometry.logical_block_shift) {
    return absl::InvalidArgumentError(
        "physical block size is smaller than the logical one");
  }
  if (geometry.size_bytes == 0 ||
      geometry.size_bytes % (uint64_t{1} << geometry.logical_block_shift)) {
    return absl::InvalidArgumentError(
        absl::StrCat("device size ", geometry.size_bytes,
                     " is not a positive multiple of the block size"));
  }
  return absl::OkStatus();
}

ublksrv_ctrl_dev_info BuildDevInfo(const DeviceOptions& options) {
  ublksrv_ctrl_dev_info info;
  std::memset(&info, 0, sizeof(info));
  info.nr_hw_queues = options.queues;
  info.queue_depth = options.depth;
  info.max_io_buf_bytes = options.max_io_bytes;
  info.dev_id = ~0u;  // the kernel picks the number
  info.ublksrv_pid = -1;
  // The default copy mode; USER_COPY would cost a pread/pwrite per request
  // on /dev/ublkcN and saves nothing for a backend that DMAs into our
  // buffers anyway. Ioctl encoding is only advertised, the opcodes say it.
  info.flags = options.user_recovery
                   ? UBLK_F_USER_RECOVERY | UBLK_F_USER_RECOVERY_REISSUE
                   : 0;
  return info;
}

ublk_params BuildParams(const Geometry& geometry, uint32_t max_io_buf_bytes) {
  ublk_params p;
  std::memset(&p, 0, sizeof(p));
  p.len = sizeof(p);
  p.types = UBLK_PARAM_TYPE_BASIC;
  auto& b = p.basic;
  if (geometry.volatile_cache) {
    b.attrs |= UBLK_ATTR_VOLATILE_CACHE;
    if (geometry.fua) b.attrs |= UBLK_ATTR_FUA;
  }
  b.logical_bs_shift = geometry.logical_block_shift;
  b.physical_bs_shift = geometry.physical_block_shift;
  b.io_min_shift = geometry.physical_block_shift;
  b.io_opt_shift = geometry.physical_block_shift;
  b.max_sectors = max_io_buf_bytes >> kSectorShift;
  b.dev_sectors = geometry.size_bytes >> kSectorShift;
  if (geometry.discard || geometry.write_zeroes) {
    p.types |= UBLK_PARAM_TYPE_DISCARD;
    auto& d = p.discard;
    // The kernel requires a granularity even for write-zeroes only.
    d.discard_granularity = 1u << geometry.physical_block_shift;
    if (geometry.discard) {
      d.max_discard_sectors = UINT32_MAX >> kSectorShift;
      if (geometry.max_discard_bytes > 0) {
        d.max_discard_sectors = static_cast<uint32_t>(std::min<uint64_t>(
            d.max_discard_sectors, geometry.max_discard_bytes >> kSectorShift));
      }
      d.max_discard_segments = 1;  // the only count ublk_drv supports
    }
    if (geometry.write_zeroes) {
      d.max_write_zeroes_sectors = UINT32_MAX >> kSectorShift;
      if (geometry.max_write_zeroes_bytes > 0) {
        d.max_write_zeroes_sectors = static_cast<uint32_t>(std::min<uint64_t>(
            d.max_write_zeroes_sectors,
            geometry.max_write_zeroes_bytes >> kSectorShift));
      }
    }
  }
  return p;
}

size_t IodAreaBytes(uint16_t depth, size_t page_size) {
  return RoundUp(size_t{depth} * sizeof(ublksrv_io_desc), page_size);
}

off_t IodAreaOffset(uint16_t queue, size_t page_size) {
  return static_cast<off_t>(UBLKSRV_CMD_BUF_OFFSET +
                            queue *
                                IodAreaBytes(UBLK_MAX_QUEUE_DEPTH, page_size));
}

uint32_t ControlOpcode(uint32_t legacy_nr, bool ioctl_encoded) {
  if (!ioctl_encoded) return legacy_nr;
  switch (legacy_nr) {
    case UBLK_CMD_GET_DEV_INFO:
      return UBLK_U_CMD_GET_DEV_INFO;
    case UBLK_CMD_ADD_DEV:
      return UBLK_U_CMD_ADD_DEV;
    case UBLK_CMD_DEL_DEV:
      return UBLK_U_CMD_DEL_DEV;
    case UBLK_CMD_START_DEV:
      return UBLK_U_CMD_START_DEV;
    case UBLK_CMD_STOP_DEV:
      return UBLK_U_CMD_STOP_DEV;
    case UBLK_CMD_SET_PARAMS:
      return UBLK_U_CMD_SET_PARAMS;
    case UBLK_CMD_GET_QUEUE_AFFINITY:
      return UBLK_U_CMD_GET_QUEUE_AFFINITY;
  }
  // Write-read encoding of any other control command.
  return _IOWR('u', legacy_nr, struct ublksrv_ctrl_cmd);
}

uint32_t FetchOpcode(bool ioctl_encoded) {
  return ioctl_encoded ? UBLK_U_IO_FETCH_REQ : UBLK_IO_FETCH_REQ;
}

uint32_t CommitOpcode(bool ioctl_encoded) {
  return ioctl_encoded ? UBLK_U_IO_COMMIT_AND_FETCH_REQ
                       : UBLK_IO_COMMIT_AND_FETCH_REQ;
}

int DecodeIod(const ublksrv_io_desc& iod, uint16_t tag,
              const Geometry& geometry, std::span<std::byte> buffer,
              IoRequest* out) {
  const uint32_t flags = ublksrv_get_flags(&iod);
  IoRequest r;
  r.tag = tag;
  r.fua = (flags & (UBLK_IO_F_FUA >> 8)) != 0;
  r.no_unmap = (flags & (UBLK_IO_F_NOUNMAP >> 8)) != 0;
  r.offset = iod.start_sector << kSectorShift;
  const uint64_t length = uint64_t{iod.nr_sectors} << kSectorShift;
  switch (ublksrv_get_op(&iod)) {
    case UBLK_IO_OP_READ:
      r.op = IoOp::kRead;
      break;
    case UBLK_IO_OP_WRITE:
      r.op = IoOp::kWrite;
      break;
    case UBLK_IO_OP_FLUSH:
      r.op = IoOp::kFlush;
      *out = r;
      return 0;
    case UBLK_IO_OP_DISCARD:
      if (!geometry.discard) return -EOPNOTSUPP;
      r.op = IoOp::kDiscard;
      break;
    case UBLK_IO_OP_WRITE_ZEROES:
      if (!geometry.write_zeroes) return -EOPNOTSUPP;
      r.op = IoOp::kWriteZeroes;
      break;
    default:
      return -EOPNOTSUPP;
  }
  if (length == 0 || length > UINT32_MAX) return -EINVAL;
  if (r.offset > geometry.size_bytes ||
      length > geometry.size_bytes - r.offset) {
    return -EIO;
  }
  const uint64_t block_mask = (uint64_t{1} << geometry.logical_block_shift) - 1;
  if ((r.offset | length) & block_mask) return -EINVAL;
  r.length = static_cast<uint32_t>(length);
  if (r.op == IoOp::kRead || r.op == IoOp::kWrite) {
    if (length > buffer.size()) return -EINVAL;
    r.buffer = buffer.first(r.length);
  }
  *out = r;
  return 0;
}

}  // namespace pathwise::datapath::ublk

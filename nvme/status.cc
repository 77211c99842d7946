// SPDX-License-Identifier: Apache-2.0
#include "nvme/status.h"

#include <cerrno>

#include "absl/strings/str_cat.h"

namespace pathwise::nvme {

model::NvmeStatusClass StatusClass(uint16_t status) {
  if ((status & 0x7ff) == 0) return model::NvmeStatusClass::kSuccess;
  switch ((status >> 8) & 7) {
    case 0:
      return model::NvmeStatusClass::kGeneric;
    case 1:
      return model::NvmeStatusClass::kCommandSpecific;
    case 2:
      return model::NvmeStatusClass::kMedia;
    case 3:
      return model::NvmeStatusClass::kPath;
    case 7:
      return model::NvmeStatusClass::kVendor;
    default:
      return model::NvmeStatusClass::kReserved;
  }
}

PassthruResult DecodePassthruResult(int32_t res) {
  PassthruResult r;
  if (res < 0) {
    r.kind = PassthruResult::Kind::kErrno;
    // Negated in 64 bits: -INT32_MIN does not fit (no kernel returns it,
    // but a result is outside input all the same).
    r.error = static_cast<int>(-int64_t{res});
  } else if (res > 0) {
    r.status = static_cast<uint16_t>(res);
    r.status_class = StatusClass(r.status);
    // A status whose SCT and SC are both 0 (only CRD/More/DNR bits) is a
    // success.
    r.kind = r.status_class == model::NvmeStatusClass::kSuccess
                 ? PassthruResult::Kind::kSuccess
                 : PassthruResult::Kind::kNvmeStatus;
  }
  return r;
}

bool IsAnaStatus(uint16_t status) {
  switch (status & kStatusSctScMask) {
    case kScAnaPersistentLoss:
    case kScAnaInaccessible:
    case kScAnaTransition:
      return true;
    default:
      return false;
  }
}

namespace {

// An errno in a passthru completion (or from its submission).
RetryClass ClassifyErrno(int err) {
  switch (err) {
    // Host resources were short (no free tag with a non-blocking issue,
    // BLK_STS_RESOURCE as ENOMEM): nothing is wrong with the path.
    case EAGAIN:
    case EBUSY:
    case ENOMEM:
      return RetryClass::kRetrySamePath;
    // The command itself is wrong, or not allowed: every path's char
    // device answers it the same way (a bad length or buffer, no
    // passthru for this command, no CAP_SYS_ADMIN).
    case EINVAL:
    case EFAULT:
    case EOPNOTSUPP:
    case ENOTTY:
    case EPERM:
    case EACCES:
    case EMSGSIZE:
    case E2BIG:
    case ENOSYS:
      return RetryClass::kFatal;
    // Everything else did not reach the namespace through this path:
    // EINTR is a command the kernel cancelled (NVME_REQ_CANCELLED: the
    // controller was reset, its timeout fired, or it is being deleted);
    // a block-layer error without an NVMe status arrives through
    // blk_status_to_errno() (BLK_STS_TRANSPORT as ENOLINK, BLK_STS_OFFLINE
    // as ENODEV, BLK_STS_TIMEOUT as ETIMEDOUT, BLK_STS_IOERR as EIO);
    // ENXIO/EBADF are a char device that went away with its controller. Like
    // blk_path_error() (which treats anything it does not know as a possible
    // path failure), an unknown errno fails over too: sending it elsewhere is
    // safe, failing the I/O while another path works is not.
    default:
      return RetryClass::kFailoverPath;
  }
}

}  // namespace

RetryClass ClassifyForRetry(const PassthruResult& r) {
  switch (r.kind) {
    case PassthruResult::Kind::kSuccess:
      return RetryClass::kNone;
    case PassthruResult::Kind::kErrno:
      return ClassifyErrno(r.error);
    case PassthruResult::Kind::kNvmeStatus:
      break;
  }
  // DNR first, as nvme_decide_disposition() checks it before anything
  // else: the controller says the command fails wherever it is sent in the
  // subsystem, so neither a retry nor another path helps, path related
  // status included. (An ANA status with DNR still dates the ANA log:
  // IsAnaStatus.)
  if (r.status & kStatusDnr) return RetryClass::kFatal;
  // Path related status (SCT 3, the kernel's nvme_is_path_error()): the
  // command did not reach the namespace through this controller, so it
  // goes to another path (the kernel's FAILOVER).
  if (r.status_class == model::NvmeStatusClass::kPath) {
    // An ANA status says the controller is alive but its ANA state for the
    // namespace is inaccessible, lost or changing: nvme_failover_req()
    // re-reads the ANA log page and fails over; the path is not broken,
    // its state is stale.
    if (IsAnaStatus(r.status)) return RetryClass::kFailoverAnaChanged;
    // Internal (300h), controller (360h) and host (370h, which the kernel
    // itself completes passthru commands with while the controller is not
    // live) pathing errors, and commands the host aborted (371h).
    return RetryClass::kFailoverPath;
  }
  // Authentication required (SCT 1, 91h): the kernel re-authenticates this
  // controller before retrying (AUTHENTICATE); a passthru command gets the
  // status instead, and another path can serve the I/O meanwhile.
  if ((r.status & kStatusSctScMask) == kScAuthRequired) {
    return RetryClass::kFailoverPath;
  }
  // Every other status without DNR (generic, command specific, media,
  // vendor): the kernel's RETRY, the same command again on the same path
  // after the CRD delay, up to its retry limit. Native multipath does not
  // fail these over: the controller answered, so the path works.
  return RetryClass::kRetrySamePath;
}

const char* RetryClassName(RetryClass c) {
  switch (c) {
    case RetryClass::kNone:
      return "none";
    case RetryClass::kRetrySamePath:
      return "retry_same_path";
    case RetryClass::kFailoverAnaChanged:
      return "failover_ana";
    case RetryClass::kFailoverPath:
      return "failover_path";
    case RetryClass::kFatal:
      return "fatal";
  }
  return "unknown";
}

absl::StatusOr<RetryDelayTimes> ParseRetryDelayTimes(
    std::span<const std::byte> identify) {
  const size_t end = kIdentifyCrdtOffset + 6;
  if (identify.size() < end) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Identify Controller data of ", identify.size(),
        " bytes has no CRDT (bytes ", kIdentifyCrdtOffset, "..", end - 1, ")"));
  }
  RetryDelayTimes t;
  for (size_t i = 0; i < t.crdt.size(); ++i) {
    const size_t at = kIdentifyCrdtOffset + 2 * i;
    t.crdt[i] = static_cast<uint16_t>(
        std::to_integer<uint16_t>(identify[at]) |
        (std::to_integer<uint16_t>(identify[at + 1]) << 8));
  }
  // Data shorter than the whole page (an old capture) just has no CQT.
  if (identify.size() >= kIdentifyCqtOffset + 2) {
    t.cqt_ms = static_cast<uint16_t>(
        std::to_integer<uint16_t>(identify[kIdentifyCqtOffset]) |
        (std::to_integer<uint16_t>(identify[kIdentifyCqtOffset + 1]) << 8));
  }
  return t;
}

int64_t RetryDelayNs(int crd, const RetryDelayTimes& times) {
  if (crd < 1 || crd > 3) return 0;
  return int64_t{times.crdt[crd - 1]} * 100'000'000;
}

}  // namespace pathwise::nvme

#include "datapath/failover.h"

#include <algorithm>
#include <cerrno>

#include "nvme/status.h"

namespace pathwise::datapath {
namespace {

constexpr uint16_t kStatusDnr = 0x4000;  // Do Not Retry (status bit 14)

// ANA Persistent Loss, ANA Inaccessible, ANA Transition (SCT 3h).
bool IsAnaStatus(uint16_t status) {
  const uint16_t code = status & 0x7ff;
  return code >= 0x301 && code <= 0x303;
}

// Errnos that describe the command, not the path: every path would refuse
// it the same way.
bool IsCommandErrno(int e) {
  switch (e) {
    case EINVAL:
    case EFAULT:
    case EOPNOTSUPP:
    case EPERM:
    case EACCES:
    case EBADF:
    case E2BIG:
    case EMSGSIZE:
    case ENOSPC:
      return true;
    default:
      return false;
  }
}

// A refusal to queue the command now, with nothing wrong with the path.
bool IsTransientErrno(int e) {
  return e == EAGAIN || e == EBUSY || e == ENOMEM;
}

}  // namespace

int32_t ErrnoForStatus(uint16_t status) {
  switch (status & 0x7ff) {
    case 0x001:  // Invalid Command Opcode
    case 0x002:  // Invalid Field in Command
    case 0x00b:  // Invalid Namespace or Format
      return -EOPNOTSUPP;
    case 0x181:  // Capacity Exceeded
      return -ENOSPC;
    default:
      return -EIO;
  }
}

Disposition DecideCompletion(int32_t res, int32_t success_result) {
  const nvme::PassthruResult r = nvme::DecodePassthruResult(res);
  Disposition d;
  d.status_class = r.status_class;
  switch (r.kind) {
    case nvme::PassthruResult::Kind::kSuccess:
      d.kind = Disposition::Kind::kComplete;
      d.result = success_result;
      return d;
    case nvme::PassthruResult::Kind::kErrno:
      if (IsCommandErrno(r.error)) {
        d.kind = Disposition::Kind::kFail;
        d.result = -r.error;
      } else if (IsTransientErrno(r.error)) {
        d.kind = Disposition::Kind::kRetry;
      } else {
        d.kind = Disposition::Kind::kFailover;
        d.path_failed = true;
      }
      return d;
    case nvme::PassthruResult::Kind::kNvmeStatus:
      break;
  }
  if (r.status_class == model::NvmeStatusClass::kPath &&
      (r.status & kStatusDnr) == 0) {
    d.kind = Disposition::Kind::kFailover;
    d.path_failed = true;
    d.ana_error = IsAnaStatus(r.status);
    return d;
  }
  d.kind = Disposition::Kind::kFail;
  d.result = ErrnoForStatus(r.status);
  return d;
}

bool PathHealth::OnFailure(int64_t now_ns) {
  if (failed_) return false;
  failed_ = true;
  backoff_ns_ = policy_.backoff_initial_ns;
  retry_at_ns_ = now_ns + backoff_ns_;
  return true;
}

bool PathHealth::OnProbeResult(bool ok, int64_t now_ns) {
  probing_ = false;
  if (!failed_) return false;
  if (ok) {
    failed_ = false;
    backoff_ns_ = 0;
    return true;
  }
  backoff_ns_ = std::min(std::max(backoff_ns_, policy_.backoff_initial_ns) * 2,
                         policy_.backoff_max_ns);
  retry_at_ns_ = now_ns + backoff_ns_;
  return false;
}

}  // namespace pathwise::datapath

// SPDX-License-Identifier: Apache-2.0
#include "datapath/failover.h"

#include <algorithm>
#include <cerrno>

#include "nvme/status.h"

namespace pathwise::datapath {

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
  // What the I/O completes with when it goes to the application now, or
  // when its retries run out.
  const int32_t error = r.kind == nvme::PassthruResult::Kind::kErrno
                            ? -r.error
                            : ErrnoForStatus(r.status);
  if (r.kind == nvme::PassthruResult::Kind::kNvmeStatus) {
    d.crd = static_cast<uint8_t>(nvme::RetryDelayIndex(r.status));
  }
  switch (nvme::ClassifyForRetry(r)) {
    case nvme::RetryClass::kNone:
      d.kind = Disposition::Kind::kComplete;
      d.result = success_result;
      break;
    case nvme::RetryClass::kRetrySamePath:
      d.kind = Disposition::Kind::kRetry;
      d.result = r.kind == nvme::PassthruResult::Kind::kErrno ? -EIO : error;
      break;
    case nvme::RetryClass::kFailoverAnaChanged:
      d.kind = Disposition::Kind::kFailover;
      d.result = -EIO;
      d.ana_error = true;
      break;
    case nvme::RetryClass::kFailoverPath:
      d.kind = Disposition::Kind::kFailover;
      d.result = -EIO;
      d.path_failed = true;
      break;
    case nvme::RetryClass::kFatal:
      d.kind = Disposition::Kind::kFail;
      d.result = error;
      d.crd = 0;  // nothing is sent again
      break;
  }
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

bool CutOffByPathFailure(const Disposition& d) {
  return d.kind == Disposition::Kind::kFailover && d.path_failed &&
         !d.ana_error;
}

int64_t RecoveryHoldNs(int64_t timeout_ns, int64_t fence_ns) {
  constexpr int64_t kDefaultTimeoutNs = 30'000'000'000;
  return (timeout_ns < 0 ? kDefaultTimeoutNs : timeout_ns) +
         std::max<int64_t>(fence_ns, 0);
}

int64_t WriteFenceNs(bool fabrics, int64_t kato_ns, uint16_t cqt_ms) {
  constexpr int64_t kDefaultKatoNs = 5'000'000'000;
  const int64_t cqt_ns = int64_t{cqt_ms} * 1'000'000;
  if (!fabrics) return cqt_ns;
  return (kato_ns < 0 ? kDefaultKatoNs : kato_ns) + cqt_ns;
}

}  // namespace pathwise::datapath

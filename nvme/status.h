// SPDX-License-Identifier: Apache-2.0
// NVMe completion status decoding for passthru commands: the NVMe status
// class of a status field, and what an io_uring passthru completion's
// result means (an NVMe status, or an error from the kernel instead).
#ifndef PATHWISE_NVME_STATUS_H_
#define PATHWISE_NVME_STATUS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "absl/status/statusor.h"
#include "model/types.h"

namespace pathwise::nvme {

// The class of an NVMe status as the kernel hands it on (the CQE status
// field without the phase bit: SC in bits 7:0, SCT in 10:8; CRD, More and
// DNR above are ignored). The same classes as the eBPF sampler's
// (bpf/pathwise_nvme_status.h); a unit test checks that they agree.
model::NvmeStatusClass StatusClass(uint16_t status);

// What the `res` of an NVMe io_uring passthru completion says: 0 success,
// > 0 the NVMe status (as above), < 0 a negated errno from the kernel
// (the command was refused, cancelled or could not be sent).
struct PassthruResult {
  enum class Kind : uint8_t { kSuccess, kNvmeStatus, kErrno };
  Kind kind = Kind::kSuccess;
  uint16_t status = 0;  // kNvmeStatus
  int error = 0;        // kErrno: the errno (positive)
  model::NvmeStatusClass status_class = model::NvmeStatusClass::kSuccess;
};
PassthruResult DecodePassthruResult(int32_t res);

// Bits of the status field above SCT (the kernel's NVME_STATUS_*).
inline constexpr uint16_t kStatusCrdMask = 0x1800;  // Command Retry Delay
inline constexpr uint16_t kStatusMore = 0x2000;
inline constexpr uint16_t kStatusDnr = 0x4000;  // Do Not Retry
// SCT and SC together (the kernel's NVME_SCT_SC_MASK).
inline constexpr uint16_t kStatusSctScMask = 0x07ff;
// Path related status (SCT 3) values.
inline constexpr uint16_t kScInternalPathError = 0x300;
inline constexpr uint16_t kScAnaPersistentLoss = 0x301;
inline constexpr uint16_t kScAnaInaccessible = 0x302;
inline constexpr uint16_t kScAnaTransition = 0x303;
inline constexpr uint16_t kScControllerPathError = 0x360;
inline constexpr uint16_t kScHostPathError = 0x370;
inline constexpr uint16_t kScHostAbortedCommand = 0x371;
inline constexpr uint16_t kScAuthRequired = 0x191;  // SCT 1

// Whether `status` is one of the ANA statuses (the kernel's
// nvme_is_ana_error()): the controller is alive but, per its ANA log, not
// serving the namespace now. DNR does not change that; the page is worth
// re-reading either way.
bool IsAnaStatus(uint16_t status);

// Which of the Identify Controller's Command Retry Delay times (CRDT1..3,
// 100 ms units) the controller asks for before a retry: 0 for none.
inline int RetryDelayIndex(uint16_t status) {
  return (status & kStatusCrdMask) >> 11;
}

// A controller's Command Retry Delay Times, from Identify Controller
// (CRDT1..3: bytes 134..139, three little-endian u16, in 100 ms units; 0
// where the controller has none). The host enables them (ACRE, which the
// kernel sets at controller start whenever CRDT1 is non-zero, with or
// without native multipath); a status then selects one with its CRD bits.
inline constexpr size_t kIdentifyCrdtOffset = 134;
// Command Quiesce Time (NVMe 2.1, bytes 386..387, little-endian, ms; 0
// where the controller does not report it): how long after a loss of
// communication the controller may still execute commands it had taken.
inline constexpr size_t kIdentifyCqtOffset = 386;
struct RetryDelayTimes {
  std::array<uint16_t, 3> crdt{};  // CRDT1..3, 100 ms units
  uint16_t cqt_ms = 0;             // Command Quiesce Time
};
// InvalidArgument when `identify` is too short to hold them.
absl::StatusOr<RetryDelayTimes> ParseRetryDelayTimes(
    std::span<const std::byte> identify);
// The wait a status with Command Retry Delay `crd` (RetryDelayIndex) asks
// for before the command is sent again: CRDT[crd - 1] x 100 ms; 0 when crd
// is 0 (or not 1..3) or that time is 0.
int64_t RetryDelayNs(int crd, const RetryDelayTimes& times);

// What a multipath datapath does with a completed passthru command, the
// decision the kernel's nvme_decide_disposition() and nvme_failover_req()
// make for native multipath. ClassifyForRetry says why each result lands
// where it does.
enum class RetryClass : uint8_t {
  kNone,  // success: complete the I/O
  // Send it again on the same path (after the CRD delay, if any), within
  // the datapath's retry bound (the kernel's is nvme_max_retries, 5); the
  // path stays usable.
  kRetrySamePath,
  // An ANA status: send it on another usable path and re-read this
  // controller's ANA log page, whose states are out of date. The path is
  // not broken: it is as usable as the page read next says (for this
  // namespace, not until then).
  kFailoverAnaChanged,
  // The path failed (path related status or transport error): send it on
  // another usable path, mark this one failed until a probe answers.
  kFailoverPath,
  // Complete the I/O with the error: any path would give the same answer.
  kFatal,
};
RetryClass ClassifyForRetry(const PassthruResult& r);
// Its name, for logs: none, retry_same_path, failover_ana, failover_path,
// fatal.
const char* RetryClassName(RetryClass c);

}  // namespace pathwise::nvme

#endif  // PATHWISE_NVME_STATUS_H_

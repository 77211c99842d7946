// SPDX-License-Identifier: Apache-2.0
// pathwise's vocabulary: the enums and small value types shared by the BPF
// sampler, the collectors, scoring, the exporters and the simulator. No
// names here: kernel strings are parsed into these at the collectors, and
// label values are spelled by the exporters (exporters/labels.h).
#ifndef PATHWISE_MODEL_TYPES_H_
#define PATHWISE_MODEL_TYPES_H_

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace pathwise::model {

// Operation classes of I/O statistics (the `op` label), in the kernel
// side's order: the values equal enum pw_op in bpf/pathwise_bpf.h. The
// sysfs fallback fills read, write, discard and flush; the BPF sampler all.
enum class Op : uint8_t {
  kRead = 0,
  kWrite = 1,     // REQ_OP_WRITE, REQ_OP_ZONE_APPEND
  kFlush = 2,     // REQ_OP_FLUSH
  kDiscard = 3,   // REQ_OP_DISCARD, REQ_OP_SECURE_ERASE
  kPassthru = 4,  // REQ_OP_DRV_IN/OUT: NVMe passthrough (io_uring_cmd, ioctl)
  kOther = 5,     // REQ_OP_WRITE_ZEROES, zone management, unknown ops
};
inline constexpr size_t kOpCount = 6;
inline constexpr std::array<Op, kOpCount> kAllOps = {
    Op::kRead, Op::kWrite, Op::kFlush, Op::kDiscard, Op::kPassthru, Op::kOther};

// Scoring's op groups: read, write, everything else.
enum class OpGroup : uint8_t { kRead = 0, kWrite = 1, kOther = 2 };
inline constexpr size_t kOpGroupCount = 3;
inline constexpr std::array<OpGroup, kOpGroupCount> kAllOpGroups = {
    OpGroup::kRead, OpGroup::kWrite, OpGroup::kOther};
constexpr OpGroup GroupOf(Op op) {
  switch (op) {
    case Op::kRead:
      return OpGroup::kRead;
    case Op::kWrite:
      return OpGroup::kWrite;
    default:
      return OpGroup::kOther;
  }
}

// Index of an enum value into arrays sized by its count.
template <typename E>
constexpr size_t Index(E e) {
  return static_cast<size_t>(e);
}

// Health of a path (scoring; docs/scoring.md).
enum class PathHealth : uint8_t { kHealthy, kDegraded, kFailed, kIdle };
inline constexpr size_t kPathHealthCount = 4;
inline constexpr std::array<PathHealth, kPathHealthCount> kAllPathHealth = {
    PathHealth::kHealthy, PathHealth::kDegraded, PathHealth::kFailed,
    PathHealth::kIdle};

// Where a snapshot's I/O statistics come from: the sysfs stat files or the
// eBPF sampler; kNone while no I/O source ran.
enum class IoSource : uint8_t { kNone, kSysfs, kBpf };

// A subsystem's multipath I/O policy. kUnknown: not reported, or a policy
// this version does not know (the subsystem keeps the kernel's string).
enum class Iopolicy : uint8_t { kUnknown, kNuma, kRoundRobin, kQueueDepth };
// The policies the advisor chooses among, in StateSet order.
inline constexpr std::array<Iopolicy, 3> kAdvisedIopolicies = {
    Iopolicy::kNuma, Iopolicy::kRoundRobin, Iopolicy::kQueueDepth};

// ANA state of a path. kUnknown: not reported (no ANA), or a state this
// version does not know (the path keeps the kernel's string).
enum class AnaState : uint8_t {
  kUnknown,
  kOptimized,
  kNonOptimized,
  kInaccessible,
  kPersistentLoss,
  kChange,
};
// The known states, in StateSet order.
inline constexpr std::array<AnaState, 5> kAllAnaStates = {
    AnaState::kOptimized, AnaState::kNonOptimized, AnaState::kInaccessible,
    AnaState::kPersistentLoss, AnaState::kChange};
// Whether the kernel's path selectors send I/O to a path in this state
// (kUnknown counts: a controller without ANA is treated as optimized).
constexpr bool AnaAllowsIo(AnaState s) {
  return s == AnaState::kUnknown || s == AnaState::kOptimized ||
         s == AnaState::kNonOptimized;
}

// State of a controller. kDeletingNoIo is the kernel's
// NVME_CTRL_DELETING_NOIO, a kind of deleting. kUnknown: not reported, or a
// state this version does not know (the controller keeps the string).
enum class ControllerState : uint8_t {
  kUnknown,
  kLive,
  kConnecting,
  kResetting,
  kDeleting,
  kDeletingNoIo,
  kDead,
  kNew,
};
// The states of the exported StateSet, in order (kDeletingNoIo is
// reported as kDeleting there; see StateSetMember).
inline constexpr std::array<ControllerState, 6> kControllerStateSet = {
    ControllerState::kLive,      ControllerState::kConnecting,
    ControllerState::kResetting, ControllerState::kDeleting,
    ControllerState::kDead,      ControllerState::kNew};
constexpr ControllerState StateSetMember(ControllerState s) {
  return s == ControllerState::kDeletingNoIo ? ControllerState::kDeleting : s;
}

// NVMe completion status classes, by Status Code Type (SCT).
enum class NvmeStatusClass : uint8_t {
  kSuccess = 0,
  kGeneric,          // SCT 0, SC != 0
  kCommandSpecific,  // SCT 1
  kMedia,            // SCT 2: media and data integrity errors
  kPath,             // SCT 3: path related, incl. host path/aborted errors
  kVendor,           // SCT 7
  kReserved,         // SCT 4..6
};
// The error classes counted per path (non-success), in the order of
// PathNvmeStats::errors_by_class (and of enum pw_nvme_err).
inline constexpr size_t kNvmeErrorClassCount = 6;
inline constexpr std::array<NvmeStatusClass, kNvmeErrorClassCount>
    kNvmeErrorClasses = {
        NvmeStatusClass::kGeneric, NvmeStatusClass::kCommandSpecific,
        NvmeStatusClass::kMedia,   NvmeStatusClass::kPath,
        NvmeStatusClass::kVendor,  NvmeStatusClass::kReserved};
// Index of an error class in kNvmeErrorClasses (c != kSuccess).
constexpr size_t ErrorClassIndex(NvmeStatusClass c) {
  return static_cast<size_t>(c) - 1;
}

// Why a controller probe (control/prober.h) failed: no completion within
// the timeout, an error from the kernel instead of an NVMe completion
// (the controller not live or gone, the command cancelled), the NVMe
// status class of a completion that carried one, or kUnavailable: pathwise
// could not send the probe at all (no char device, no permission, a kernel
// without admin passthru over io_uring), which says nothing about the
// controller.
enum class ProbeFailure : uint8_t {
  kTimeout,
  kTransport,
  kUnavailable,
  kGeneric,
  kCommandSpecific,
  kMedia,
  kPath,
  kVendor,
  kReserved,
};
inline constexpr size_t kProbeFailureCount = 9;
inline constexpr std::array<ProbeFailure, kProbeFailureCount>
    kAllProbeFailures = {ProbeFailure::kTimeout,
                         ProbeFailure::kTransport,
                         ProbeFailure::kUnavailable,
                         ProbeFailure::kGeneric,
                         ProbeFailure::kCommandSpecific,
                         ProbeFailure::kMedia,
                         ProbeFailure::kPath,
                         ProbeFailure::kVendor,
                         ProbeFailure::kReserved};
// The failure of a completion with NVMe status class `c` (c != kSuccess).
constexpr ProbeFailure ProbeFailureOf(NvmeStatusClass c) {
  switch (c) {
    case NvmeStatusClass::kGeneric:
      return ProbeFailure::kGeneric;
    case NvmeStatusClass::kCommandSpecific:
      return ProbeFailure::kCommandSpecific;
    case NvmeStatusClass::kMedia:
      return ProbeFailure::kMedia;
    case NvmeStatusClass::kPath:
      return ProbeFailure::kPath;
    case NvmeStatusClass::kVendor:
      return ProbeFailure::kVendor;
    default:
      return ProbeFailure::kReserved;
  }
}
// Whether a failure says the controller cannot be reached: the ones that
// make its paths unusable to scoring. A controller that answered with a
// generic or command-specific status is reachable.
constexpr bool ProbeFailureMeansUnreachable(ProbeFailure f) {
  return f == ProbeFailure::kTimeout || f == ProbeFailure::kTransport ||
         f == ProbeFailure::kPath;
}

// Why the BPF sampler's kernel side could not account an event.
enum class DropReason : uint8_t {
  kStartMapFull = 0,  // own issue timestamp not stored: start map full
  kNoStartTime,       // completion without start time (issued before
                      // attach, or never issued to the device)
  kIoMapFull,         // I/O aggregation map full
  kPathMapFull,       // per-path map full
  kRecursion,         // program not run: nested on the same CPU
                      // (bpf_prog_info.recursion_misses)
  kStartCollision,    // own issue timestamp not stored: every slot of the
                      // request's line held another live request's stamp
};
inline constexpr size_t kDropReasonCount = 6;
inline constexpr std::array<DropReason, kDropReasonCount> kAllDropReasons = {
    DropReason::kStartMapFull, DropReason::kNoStartTime,
    DropReason::kIoMapFull,    DropReason::kPathMapFull,
    DropReason::kRecursion,    DropReason::kStartCollision};

// A block device number.
struct DevId {
  uint32_t major = 0;
  uint32_t minor = 0;
  // The kernel's internal dev_t encoding (BPF maps): major << 20 | minor.
  static constexpr DevId FromKernel(uint32_t dev) {
    return {dev >> 20, dev & 0xfffff};
  }
  friend auto operator<=>(const DevId&, const DevId&) = default;
};
std::string ToString(const DevId& dev);  // "259:0"

// The parts of a hidden NVMe path disk's name, nvme<S>c<C>n<N>: subsystem
// instance, controller instance and namespace (views into the name).
struct NvmePathName {
  absl::string_view subsystem;
  absl::string_view controller;
  absl::string_view ns;
};
std::optional<NvmePathName> ParseNvmePathName(absl::string_view name);
// A controller's name, nvme<N>: its instance N, or -1 for anything else.
int ControllerInstance(absl::string_view name);
// The head (visible multipath disk) of a path: nvme<S>n<N>.
std::string HeadName(const NvmePathName& path);

}  // namespace pathwise::model

#endif  // PATHWISE_MODEL_TYPES_H_

// Vocabulary of the BPF sampler shared by the kernel side and the exporter:
// operation classes, NVMe status classes and kernel-side drop reasons,
// with their label values. Pure logic, no BPF.
#ifndef PATHWISE_BPF_STATUS_H_
#define PATHWISE_BPF_STATUS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace pathwise::bpf {

// The `op` label. Values equal enum pw_op in bpf/pathwise_bpf.h.
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

// "read", "write", "flush", "discard", "passthru", "other".
std::string_view OpName(Op op);

// Maps a kernel REQ_OP_* name ("REQ_OP_READ", ...) to its op class;
// nullopt for names that are not request operations.
std::optional<Op> OpClassForReqOpName(std::string_view req_op_name);

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

// Classifies nvme_request.status as the kernel stores it: the CQE status
// field without the phase bit (SC in bits 7:0, SCT in 10:8, CRD 12:11,
// M 13, DNR 14). Only SCT and SC matter; CRD/M/DNR are ignored.
NvmeStatusClass ClassifyNvmeStatus(uint16_t status);

// The `status_class` label: "success", "generic", "command_specific",
// "media", "path", "vendor", "reserved".
std::string_view NvmeStatusClassName(NvmeStatusClass c);

// The error classes the kernel counts per path (non-success), in the order
// of pw_path_val.nvme_errors (enum pw_nvme_err).
inline constexpr size_t kNvmeErrorClassCount = 6;
inline constexpr std::array<NvmeStatusClass, kNvmeErrorClassCount>
    kNvmeErrorClasses = {
        NvmeStatusClass::kGeneric, NvmeStatusClass::kCommandSpecific,
        NvmeStatusClass::kMedia,   NvmeStatusClass::kPath,
        NvmeStatusClass::kVendor,  NvmeStatusClass::kReserved};

// Reasons for `pathwise_bpf_events_dropped_total{reason}`.
enum class DropReason : uint8_t {
  kStartMapFull = 0,  // own issue timestamp not stored: start map full
  kNoStartTime,       // completion without start time (issued before
                      // attach, or never issued to the device)
  kIoMapFull,         // I/O aggregation map full
  kPathMapFull,       // per-path map full
  kRecursion,         // program not run: nested on the same CPU
                      // (bpf_prog_info.recursion_misses)
};
inline constexpr size_t kDropReasonCount = 5;
inline constexpr std::array<DropReason, kDropReasonCount> kAllDropReasons = {
    DropReason::kStartMapFull, DropReason::kNoStartTime, DropReason::kIoMapFull,
    DropReason::kPathMapFull, DropReason::kRecursion};

// "start_map_full", "no_start_time", "io_map_full", "path_map_full",
// "recursion".
std::string_view DropReasonName(DropReason r);

}  // namespace pathwise::bpf

#endif  // PATHWISE_BPF_STATUS_H_

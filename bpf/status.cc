#include "bpf/status.h"

extern "C" {
#include "bpf/pathwise_bpf.h"
#include "bpf/pathwise_nvme_status.h"
}

namespace pathwise::bpf {

static_assert(static_cast<int>(Op::kRead) == PW_OP_READ);
static_assert(static_cast<int>(Op::kWrite) == PW_OP_WRITE);
static_assert(static_cast<int>(Op::kFlush) == PW_OP_FLUSH);
static_assert(static_cast<int>(Op::kDiscard) == PW_OP_DISCARD);
static_assert(static_cast<int>(Op::kPassthru) == PW_OP_PASSTHRU);
static_assert(static_cast<int>(Op::kOther) == PW_OP_OTHER);
static_assert(kOpCount == PW_OP_COUNT);
static_assert(kNvmeErrorClassCount == PW_NVME_ERR_COUNT);

std::string_view OpName(Op op) {
  switch (op) {
    case Op::kRead:
      return "read";
    case Op::kWrite:
      return "write";
    case Op::kFlush:
      return "flush";
    case Op::kDiscard:
      return "discard";
    case Op::kPassthru:
      return "passthru";
    case Op::kOther:
      return "other";
  }
  return "other";
}

std::optional<Op> OpClassForReqOpName(std::string_view name) {
  constexpr std::string_view kPrefix = "REQ_OP_";
  if (!name.starts_with(kPrefix)) return std::nullopt;
  name.remove_prefix(kPrefix.size());
  if (name == "LAST" || name == "BITS" || name == "MASK") return std::nullopt;
  if (name == "READ") return Op::kRead;
  if (name == "WRITE" || name == "ZONE_APPEND") return Op::kWrite;
  if (name == "FLUSH") return Op::kFlush;
  if (name == "DISCARD" || name == "SECURE_ERASE") return Op::kDiscard;
  if (name == "DRV_IN" || name == "DRV_OUT") return Op::kPassthru;
  return Op::kOther;
}

NvmeStatusClass ClassifyNvmeStatus(uint16_t status) {
  if ((status & PW_NVME_SCT_SC_MASK) == 0) return NvmeStatusClass::kSuccess;
  // The kernel program's classifier, so that this is what it counts.
  return kNvmeErrorClasses[pw_nvme_err_class(status)];
}

std::string_view NvmeStatusClassName(NvmeStatusClass c) {
  switch (c) {
    case NvmeStatusClass::kSuccess:
      return "success";
    case NvmeStatusClass::kGeneric:
      return "generic";
    case NvmeStatusClass::kCommandSpecific:
      return "command_specific";
    case NvmeStatusClass::kMedia:
      return "media";
    case NvmeStatusClass::kPath:
      return "path";
    case NvmeStatusClass::kVendor:
      return "vendor";
    case NvmeStatusClass::kReserved:
      return "reserved";
  }
  return "reserved";
}

std::string_view DropReasonName(DropReason r) {
  switch (r) {
    case DropReason::kStartMapFull:
      return "start_map_full";
    case DropReason::kNoStartTime:
      return "no_start_time";
    case DropReason::kIoMapFull:
      return "io_map_full";
    case DropReason::kPathMapFull:
      return "path_map_full";
    case DropReason::kRecursion:
      return "recursion";
  }
  return "unknown";
}

}  // namespace pathwise::bpf

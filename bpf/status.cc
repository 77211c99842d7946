// SPDX-License-Identifier: Apache-2.0
#include "bpf/status.h"

extern "C" {
#include "bpf/pathwise_bpf.h"
#include "bpf/pathwise_hist.h"
#include "bpf/pathwise_nvme_status.h"
}

namespace pathwise::bpf {

// The kernel indexes its maps by these values: model::Op is pw_op.
static_assert(static_cast<int>(Op::kRead) == PW_OP_READ);
static_assert(static_cast<int>(Op::kWrite) == PW_OP_WRITE);
static_assert(static_cast<int>(Op::kFlush) == PW_OP_FLUSH);
static_assert(static_cast<int>(Op::kDiscard) == PW_OP_DISCARD);
static_assert(static_cast<int>(Op::kPassthru) == PW_OP_PASSTHRU);
static_assert(static_cast<int>(Op::kOther) == PW_OP_OTHER);
static_assert(kOpCount == PW_OP_COUNT);

// kNvmeErrorClasses[i] is what pw_path_val.nvme_errors[i] counts.
static_assert(kNvmeErrorClassCount == PW_NVME_ERR_COUNT);
static_assert(model::ErrorClassIndex(NvmeStatusClass::kGeneric) ==
              PW_NVME_GENERIC);
static_assert(model::ErrorClassIndex(NvmeStatusClass::kCommandSpecific) ==
              PW_NVME_COMMAND);
static_assert(model::ErrorClassIndex(NvmeStatusClass::kMedia) == PW_NVME_MEDIA);
static_assert(model::ErrorClassIndex(NvmeStatusClass::kPath) == PW_NVME_PATH);
static_assert(model::ErrorClassIndex(NvmeStatusClass::kVendor) ==
              PW_NVME_VENDOR);
static_assert(model::ErrorClassIndex(NvmeStatusClass::kReserved) ==
              PW_NVME_RESERVED);

// The model's histogram layout is the one the programs fill
// (pathwise_hist.h); tests/unit/bpf/histogram_test.cc compares the bucketing.
using Layout = model::KernelLatencyLayout;
static_assert(Layout::kBuckets == PW_HIST_BUCKETS);
static_assert(Layout::kFiniteBuckets == PW_HIST_FINITE);
static_assert(Layout::UpperBoundNs(0) == (1ull << PW_HIST_MIN_SHIFT));
static_assert(Layout::UpperBoundNs(PW_HIST_FINITE - 1) ==
              (1ull << PW_HIST_MAX_SHIFT));
static_assert(Layout::UpperBoundNs(1) - Layout::UpperBoundNs(0) ==
              (1ull << (PW_HIST_MIN_SHIFT - PW_HIST_SUB_BITS)));

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

}  // namespace pathwise::bpf

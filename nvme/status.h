// NVMe completion status decoding for passthru commands: the NVMe status
// class of a status field, and what an io_uring passthru completion's
// result means (an NVMe status, or an error from the kernel instead).
#ifndef PATHWISE_NVME_STATUS_H_
#define PATHWISE_NVME_STATUS_H_

#include <cstdint>

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

}  // namespace pathwise::nvme

#endif  // PATHWISE_NVME_STATUS_H_

#include "nvme/status.h"

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
    r.error = -res;
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

}  // namespace pathwise::nvme

#include "nvme/admin.h"

#include <cstring>

namespace pathwise::nvme {

nvme_uring_cmd IdentifyController(void* data) {
  nvme_uring_cmd c;
  std::memset(&c, 0, sizeof(c));
  c.opcode = kAdminIdentify;
  c.addr = reinterpret_cast<uintptr_t>(data);
  c.data_len = kIdentifyDataBytes;
  c.cdw10 = kIdentifyCnsController;
  return c;
}

}  // namespace pathwise::nvme

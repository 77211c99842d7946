// SPDX-License-Identifier: Apache-2.0
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

nvme_uring_cmd GetLogPageAna(void* buf, uint32_t len, bool rgo) {
  nvme_uring_cmd c;
  std::memset(&c, 0, sizeof(c));
  c.opcode = kAdminGetLogPage;
  c.nsid = kNsidAll;
  c.addr = reinterpret_cast<uintptr_t>(buf);
  const uint32_t dwords = len / 4;
  c.data_len = dwords * 4;
  const uint32_t numd = dwords > 0 ? dwords - 1 : 0;
  c.cdw10 = kLogPageAna | (rgo ? kAnaLspRgo << 8 : 0) | (numd & 0xffff) << 16;
  c.cdw11 = numd >> 16;
  return c;
}

}  // namespace pathwise::nvme

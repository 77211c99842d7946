// SPDX-License-Identifier: Apache-2.0
#include "nvme/io.h"

#include <cstring>

namespace pathwise::nvme {
namespace {

nvme_uring_cmd Base(uint8_t opcode, uint32_t nsid) {
  nvme_uring_cmd c;
  std::memset(&c, 0, sizeof(c));
  c.opcode = opcode;
  c.nsid = nsid;
  return c;
}

// SLBA in CDW10 (low) and CDW11 (high), NLB 0-based in CDW12 15:0.
void SetRange(nvme_uring_cmd& c, uint64_t slba, uint32_t blocks) {
  c.cdw10 = static_cast<uint32_t>(slba);
  c.cdw11 = static_cast<uint32_t>(slba >> 32);
  c.cdw12 = (blocks - 1) & 0xffff;
}

}  // namespace

nvme_uring_cmd ReadCommand(uint32_t nsid, uint64_t slba, uint32_t blocks,
                           void* data, uint32_t bytes) {
  nvme_uring_cmd c = Base(kIoRead, nsid);
  SetRange(c, slba, blocks);
  c.addr = reinterpret_cast<uintptr_t>(data);
  c.data_len = bytes;
  return c;
}

nvme_uring_cmd WriteCommand(uint32_t nsid, uint64_t slba, uint32_t blocks,
                            const void* data, uint32_t bytes, bool fua) {
  nvme_uring_cmd c = Base(kIoWrite, nsid);
  SetRange(c, slba, blocks);
  if (fua) c.cdw12 |= kCdw12Fua;
  c.addr = reinterpret_cast<uintptr_t>(data);
  c.data_len = bytes;
  return c;
}

nvme_uring_cmd FlushCommand(uint32_t nsid) { return Base(kIoFlush, nsid); }

nvme_uring_cmd WriteZeroesCommand(uint32_t nsid, uint64_t slba, uint32_t blocks,
                                  bool allow_deallocate) {
  nvme_uring_cmd c = Base(kIoWriteZeroes, nsid);
  SetRange(c, slba, blocks);
  if (allow_deallocate) c.cdw12 |= kCdw12Deallocate;
  return c;
}

nvme_uring_cmd DeallocateCommand(uint32_t nsid, const DsmRange* ranges,
                                 uint32_t count) {
  nvme_uring_cmd c = Base(kIoDatasetManagement, nsid);
  // NR, 0-based, in CDW10 7:0.
  c.cdw10 = (count - 1) & 0xff;
  c.cdw11 = kDsmAttributeDeallocate;
  c.addr = reinterpret_cast<uintptr_t>(ranges);
  c.data_len = count * static_cast<uint32_t>(sizeof(DsmRange));
  return c;
}

}  // namespace pathwise::nvme

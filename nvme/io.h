// SPDX-License-Identifier: Apache-2.0
// NVMe I/O command builders for io_uring passthru (struct nvme_uring_cmd of
// <linux/nvme_ioctl.h>, sent as NVME_URING_CMD_IO on a namespace's generic
// char device /dev/ngXnY). Pure: they only fill the command; the caller keeps
// the data buffers alive until the command completes.
//
// Block counts are given as counts (1 or more); the commands carry them the
// way NVMe wants: 0-based in the 16-bit NLB field of Read, Write and Write
// Zeroes, 1-based in a Dataset Management range.
#ifndef PATHWISE_NVME_IO_H_
#define PATHWISE_NVME_IO_H_

#include <linux/nvme_ioctl.h>

#include <cstdint>

namespace pathwise::nvme {

inline constexpr uint8_t kIoFlush = 0x00;
inline constexpr uint8_t kIoWrite = 0x01;
inline constexpr uint8_t kIoRead = 0x02;
inline constexpr uint8_t kIoWriteZeroes = 0x08;
inline constexpr uint8_t kIoDatasetManagement = 0x09;

// CDW12 of Read/Write/Write Zeroes: bits 15:0 NLB (0-based), bit 30 FUA;
// Write Zeroes bit 25 DEAC (deallocate).
inline constexpr uint32_t kCdw12Fua = uint32_t{1} << 30;
inline constexpr uint32_t kCdw12Deallocate = uint32_t{1} << 25;
// Dataset Management CDW11 bit 2: AD, deallocate the ranges.
inline constexpr uint32_t kDsmAttributeDeallocate = uint32_t{1} << 2;

// The most blocks one Read/Write/Write Zeroes command can carry.
inline constexpr uint32_t kMaxBlocksPerCommand = 65536;

// One Dataset Management range (16 bytes, little-endian as the host is on
// every architecture the datapath runs on).
struct DsmRange {
  uint32_t context_attributes = 0;
  uint32_t blocks = 0;  // 1-based
  uint64_t slba = 0;
};
static_assert(sizeof(DsmRange) == 16);

// `blocks` is 1..kMaxBlocksPerCommand; `bytes` = blocks x the LBA size.
nvme_uring_cmd ReadCommand(uint32_t nsid, uint64_t slba, uint32_t blocks,
                           void* data, uint32_t bytes);
nvme_uring_cmd WriteCommand(uint32_t nsid, uint64_t slba, uint32_t blocks,
                            const void* data, uint32_t bytes, bool fua);
nvme_uring_cmd FlushCommand(uint32_t nsid);
// With allow_deallocate the controller may deallocate the range instead of
// writing zeroes (it reads back as zeroes either way when DLFEAT says so;
// the caller decides).
nvme_uring_cmd WriteZeroesCommand(uint32_t nsid, uint64_t slba, uint32_t blocks,
                                  bool allow_deallocate);
// Deallocates `count` ranges of `ranges` (1..256), which must stay alive
// until the command completes.
nvme_uring_cmd DeallocateCommand(uint32_t nsid, const DsmRange* ranges,
                                 uint32_t count);

}  // namespace pathwise::nvme

#endif  // PATHWISE_NVME_IO_H_

// SPDX-License-Identifier: Apache-2.0
// The NVMe I/O command builders: every field the controller reads.
#include "nvme/io.h"

#include <array>
#include <cstddef>

#include "gtest/gtest.h"

namespace pathwise::nvme {
namespace {

TEST(NvmeIoTest, ReadCarriesNsidSlbaAndZeroBasedCount) {
  std::array<std::byte, 8192> buf{};
  const uint64_t slba = 0x1'2345'6789ULL;
  const nvme_uring_cmd c = ReadCommand(7, slba, 2, buf.data(), 8192);
  EXPECT_EQ(c.opcode, 0x02);
  EXPECT_EQ(c.nsid, 7u);
  EXPECT_EQ(c.cdw10, 0x2345'6789u);  // SLBA low
  EXPECT_EQ(c.cdw11, 0x1u);          // SLBA high
  EXPECT_EQ(c.cdw12, 1u);            // NLB 0-based, no FUA
  EXPECT_EQ(c.addr, reinterpret_cast<uintptr_t>(buf.data()));
  EXPECT_EQ(c.data_len, 8192u);
  EXPECT_EQ(c.metadata, 0u);
  EXPECT_EQ(c.cdw13, 0u);
  EXPECT_EQ(c.timeout_ms, 0u);
}

TEST(NvmeIoTest, WriteSetsFuaOnlyWhenAsked) {
  std::array<std::byte, 512> buf{};
  const nvme_uring_cmd plain = WriteCommand(1, 10, 1, buf.data(), 512, false);
  EXPECT_EQ(plain.opcode, 0x01);
  EXPECT_EQ(plain.cdw10, 10u);
  EXPECT_EQ(plain.cdw12, 0u);
  const nvme_uring_cmd fua = WriteCommand(1, 10, 1, buf.data(), 512, true);
  EXPECT_EQ(fua.cdw12, uint32_t{1} << 30);
  EXPECT_EQ(fua.data_len, 512u);
}

TEST(NvmeIoTest, LargestCountFillsSixteenBits) {
  const nvme_uring_cmd c = ReadCommand(1, 0, kMaxBlocksPerCommand, nullptr, 0);
  EXPECT_EQ(c.cdw12, 0xffffu);
}

TEST(NvmeIoTest, FlushHasNoRangeOrData) {
  const nvme_uring_cmd c = FlushCommand(3);
  EXPECT_EQ(c.opcode, 0x00);
  EXPECT_EQ(c.nsid, 3u);
  EXPECT_EQ(c.cdw10, 0u);
  EXPECT_EQ(c.cdw12, 0u);
  EXPECT_EQ(c.addr, 0u);
  EXPECT_EQ(c.data_len, 0u);
}

TEST(NvmeIoTest, WriteZeroesDeallocatesOnlyWhenAllowed) {
  const nvme_uring_cmd keep = WriteZeroesCommand(1, 100, 8, false);
  EXPECT_EQ(keep.opcode, 0x08);
  EXPECT_EQ(keep.cdw10, 100u);
  EXPECT_EQ(keep.cdw12, 7u);
  EXPECT_EQ(keep.data_len, 0u);
  const nvme_uring_cmd deac = WriteZeroesCommand(1, 100, 8, true);
  EXPECT_EQ(deac.cdw12, 7u | (uint32_t{1} << 25));
}

TEST(NvmeIoTest, DeallocateSendsItsRangesWithTheAttribute) {
  std::array<DsmRange, 2> ranges{DsmRange{.blocks = 16, .slba = 1 << 20},
                                 DsmRange{.blocks = 1, .slba = 5}};
  const nvme_uring_cmd c = DeallocateCommand(9, ranges.data(), 2);
  EXPECT_EQ(c.opcode, 0x09);
  EXPECT_EQ(c.nsid, 9u);
  EXPECT_EQ(c.cdw10, 1u);       // NR 0-based
  EXPECT_EQ(c.cdw11, 1u << 2);  // AD
  EXPECT_EQ(c.data_len, 32u);
  EXPECT_EQ(c.addr, reinterpret_cast<uintptr_t>(ranges.data()));
  // The range layout the controller reads: CA, NLB (1-based), SLBA.
  const auto* raw = reinterpret_cast<const uint32_t*>(ranges.data());
  EXPECT_EQ(raw[0], 0u);
  EXPECT_EQ(raw[1], 16u);
  EXPECT_EQ(raw[2], 1u << 20);
  EXPECT_EQ(raw[3], 0u);
}

}  // namespace
}  // namespace pathwise::nvme

// SPDX-License-Identifier: Apache-2.0
#include "datapath/ublk/params.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <vector>

namespace pathwise::datapath::ublk {
namespace {

Geometry FileLike() {
  Geometry g;
  g.size_bytes = 256 << 20;
  g.logical_block_shift = 9;
  g.physical_block_shift = 12;
  g.volatile_cache = true;
  g.fua = true;
  g.discard = true;
  g.write_zeroes = true;
  return g;
}

TEST(UblkParams, DevInfoAsksForANewDeviceInTheDefaultCopyMode) {
  DeviceOptions o;
  o.queues = 2;
  o.depth = 128;
  o.max_io_bytes = 256 << 10;
  const ublksrv_ctrl_dev_info info = BuildDevInfo(o);
  EXPECT_EQ(info.nr_hw_queues, 2);
  EXPECT_EQ(info.queue_depth, 128);
  EXPECT_EQ(info.max_io_buf_bytes, 256u << 10);
  EXPECT_EQ(info.dev_id, ~0u);
  EXPECT_EQ(info.flags, 0u);
  o.user_recovery = true;
  EXPECT_EQ(BuildDevInfo(o).flags,
            UBLK_F_USER_RECOVERY | UBLK_F_USER_RECOVERY_REISSUE);
}

TEST(UblkParams, ParamsFollowTheGeometry) {
  ublk_params p = BuildParams(FileLike(), 512 << 10);
  EXPECT_EQ(p.len, sizeof(ublk_params));
  EXPECT_EQ(p.types, UBLK_PARAM_TYPE_BASIC | UBLK_PARAM_TYPE_DISCARD);
  EXPECT_EQ(p.basic.attrs, UBLK_ATTR_VOLATILE_CACHE | UBLK_ATTR_FUA);
  EXPECT_EQ(p.basic.logical_bs_shift, 9);
  EXPECT_EQ(p.basic.physical_bs_shift, 12);
  EXPECT_EQ(p.basic.max_sectors, 1024u);
  EXPECT_EQ(p.basic.dev_sectors, (256u << 20) / 512);
  // ublk_drv refuses a discard section without a granularity, and any
  // segment count but 1.
  EXPECT_EQ(p.discard.discard_granularity, 4096u);
  EXPECT_EQ(p.discard.max_discard_segments, 1);
  EXPECT_GT(p.discard.max_discard_sectors, 0u);
  EXPECT_GT(p.discard.max_write_zeroes_sectors, 0u);

  Geometry plain = FileLike();
  plain.volatile_cache = false;
  plain.discard = false;
  plain.write_zeroes = false;
  p = BuildParams(plain, 512 << 10);
  EXPECT_EQ(p.types, UBLK_PARAM_TYPE_BASIC);
  // FUA without a volatile cache means nothing to the block layer.
  EXPECT_EQ(p.basic.attrs, 0u);
}

TEST(UblkParams, OptionsOutsideWhatTheKernelTakesAreRefused) {
  const Geometry g = FileLike();
  EXPECT_TRUE(ValidateOptions(DeviceOptions{}, g).ok());
  DeviceOptions o;
  o.depth = 0;
  EXPECT_FALSE(ValidateOptions(o, g).ok());
  o.depth = UBLK_MAX_QUEUE_DEPTH + 1;
  EXPECT_FALSE(ValidateOptions(o, g).ok());
  o = DeviceOptions{};
  o.queues = 0;
  EXPECT_FALSE(ValidateOptions(o, g).ok());
  o = DeviceOptions{};
  o.max_io_bytes = 1000;
  EXPECT_FALSE(ValidateOptions(o, g).ok());
  Geometry bad = g;
  bad.logical_block_shift = 13;
  bad.physical_block_shift = 13;
  EXPECT_FALSE(ValidateOptions(DeviceOptions{}, bad).ok());
  bad = g;
  bad.physical_block_shift = 8;
  EXPECT_FALSE(ValidateOptions(DeviceOptions{}, bad).ok());
  bad = g;
  bad.size_bytes = 1000;
  EXPECT_FALSE(ValidateOptions(DeviceOptions{}, bad).ok());
}

TEST(UblkParams, DescriptorAreaLayoutMatchesTheDriver) {
  // 24-byte descriptors, rounded up to pages; queue q at q times the area
  // of the largest depth (4096 * 24 bytes = 24 pages).
  EXPECT_EQ(IodAreaBytes(64, 4096), 4096u);
  EXPECT_EQ(IodAreaBytes(200, 4096), 8192u);
  EXPECT_EQ(IodAreaOffset(0, 4096), 0);
  EXPECT_EQ(IodAreaOffset(1, 4096), 98304);
  EXPECT_EQ(IodAreaOffset(3, 4096), 3 * 98304);
}

TEST(UblkParams, OpcodesAreTheKernelsNumbers) {
  EXPECT_EQ(ControlOpcode(UBLK_CMD_ADD_DEV, true), 0xc0207504u);
  EXPECT_EQ(ControlOpcode(UBLK_CMD_SET_PARAMS, true), 0xc0207508u);
  EXPECT_EQ(ControlOpcode(UBLK_CMD_START_DEV, true), 0xc0207506u);
  EXPECT_EQ(ControlOpcode(UBLK_CMD_STOP_DEV, true), 0xc0207507u);
  EXPECT_EQ(ControlOpcode(UBLK_CMD_DEL_DEV, true), 0xc0207505u);
  EXPECT_EQ(ControlOpcode(UBLK_CMD_GET_QUEUE_AFFINITY, true), 0x80207501u);
  EXPECT_EQ(ControlOpcode(UBLK_CMD_GET_QUEUE_AFFINITY, false), 0x01u);
  EXPECT_EQ(static_cast<uint32_t>(UBLK_U_CMD_GET_FEATURES), 0x80207513u);
  EXPECT_EQ(FetchOpcode(true), 0xc0107520u);
  EXPECT_EQ(CommitOpcode(true), 0xc0107521u);
  EXPECT_EQ(ControlOpcode(UBLK_CMD_ADD_DEV, false), 0x04u);
  EXPECT_EQ(FetchOpcode(false), 0x20u);
  EXPECT_EQ(CommitOpcode(false), 0x21u);
}

class DecodeTest : public ::testing::Test {
 protected:
  int Decode(uint32_t op_flags, uint64_t sector, uint32_t sectors,
             const Geometry& g) {
    ublksrv_io_desc iod{};
    iod.op_flags = op_flags;
    iod.start_sector = sector;
    iod.nr_sectors = sectors;
    return DecodeIod(iod, 7, g, buffer_, &out_);
  }
  std::vector<std::byte> storage_ = std::vector<std::byte>(64 << 10);
  std::span<std::byte> buffer_{storage_};
  IoRequest out_;
};

TEST_F(DecodeTest, ReadsAndWritesGetTheTagsBuffer) {
  ASSERT_EQ(Decode(UBLK_IO_OP_READ, 8, 8, FileLike()), 0);
  EXPECT_EQ(out_.tag, 7);
  EXPECT_EQ(out_.op, IoOp::kRead);
  EXPECT_EQ(out_.offset, 4096u);
  EXPECT_EQ(out_.length, 4096u);
  EXPECT_EQ(out_.buffer.data(), storage_.data());
  EXPECT_EQ(out_.buffer.size(), 4096u);
  EXPECT_FALSE(out_.fua);

  ASSERT_EQ(Decode(UBLK_IO_OP_WRITE | UBLK_IO_F_FUA, 16, 128, FileLike()), 0);
  EXPECT_EQ(out_.op, IoOp::kWrite);
  EXPECT_TRUE(out_.fua);
  EXPECT_EQ(out_.length, 64u << 10);
}

TEST_F(DecodeTest, FlushDiscardAndZeroesCarryNoBuffer) {
  ASSERT_EQ(Decode(UBLK_IO_OP_FLUSH, 0, 0, FileLike()), 0);
  EXPECT_EQ(out_.op, IoOp::kFlush);
  EXPECT_TRUE(out_.buffer.empty());
  ASSERT_EQ(Decode(UBLK_IO_OP_DISCARD, 2048, 4096, FileLike()), 0);
  EXPECT_EQ(out_.op, IoOp::kDiscard);
  EXPECT_EQ(out_.length, 2u << 20);  // larger than the buffer is fine
  EXPECT_TRUE(out_.buffer.empty());
  ASSERT_EQ(
      Decode(UBLK_IO_OP_WRITE_ZEROES | UBLK_IO_F_NOUNMAP, 0, 8, FileLike()), 0);
  EXPECT_EQ(out_.op, IoOp::kWriteZeroes);
  EXPECT_TRUE(out_.no_unmap);
}

TEST_F(DecodeTest, BadDescriptorsFailWithTheRightErrno) {
  Geometry g = FileLike();
  EXPECT_EQ(Decode(9, 0, 8, g), -EOPNOTSUPP);  // WRITE_SAME and beyond
  EXPECT_EQ(Decode(UBLK_IO_OP_READ, 0, 0, g), -EINVAL);
  EXPECT_EQ(Decode(UBLK_IO_OP_READ, 0, 129, g), -EINVAL);  // > buffer
  const uint64_t last = g.size_bytes / 512;
  EXPECT_EQ(Decode(UBLK_IO_OP_READ, last - 8, 8, g), 0);
  EXPECT_EQ(Decode(UBLK_IO_OP_READ, last - 4, 8, g), -EIO);
  EXPECT_EQ(Decode(UBLK_IO_OP_WRITE, last + 8, 8, g), -EIO);
  g.discard = false;
  g.write_zeroes = false;
  EXPECT_EQ(Decode(UBLK_IO_OP_DISCARD, 0, 8, g), -EOPNOTSUPP);
  EXPECT_EQ(Decode(UBLK_IO_OP_WRITE_ZEROES, 0, 8, g), -EOPNOTSUPP);
  g = FileLike();
  g.logical_block_shift = 12;
  EXPECT_EQ(Decode(UBLK_IO_OP_READ, 1, 8, g), -EINVAL);
  EXPECT_EQ(Decode(UBLK_IO_OP_READ, 8, 8, g), 0);
}

}  // namespace
}  // namespace pathwise::datapath::ublk

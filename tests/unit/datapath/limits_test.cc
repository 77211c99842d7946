// SPDX-License-Identifier: Apache-2.0
// The device's geometry and largest request from its paths' sysfs limits
// (LimitsOf), and how the ublk parameters carry the discard and
// write-zeroes limits.
#include "datapath/namespaces.h"
#include "datapath/nvme_backend.h"
#include "datapath/ublk/params.h"
#include "gtest/gtest.h"

namespace pathwise::datapath {
namespace {

NamespacePath Path(int c, uint32_t max_kb, uint32_t segments) {
  NamespacePath p;
  p.name = "nvme" + std::to_string(c) + "n1";
  p.size_sectors = 8 << 20;  // 4 GiB
  p.logical_block_size = 512;
  p.physical_block_size = 4096;
  p.max_hw_sectors_kb = max_kb;
  p.max_segments = segments;
  p.discard_max_hw_bytes = 1 << 30;
  p.write_zeroes_max_bytes = 1u << 31;
  p.volatile_cache = true;
  p.fua = true;
  return p;
}

TEST(LimitsOfTest, SmallestLimitsOfAllPaths) {
  NamespaceGroup g{.id = "uuid.1",
                   .paths = {Path(0, 2048, 0), Path(1, 512, 0)}};
  absl::StatusOr<GroupLimits> l = LimitsOf(g, 1 << 20);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->max_io_bytes, 512u * 1024);
  EXPECT_EQ(l->geometry.size_bytes, uint64_t{4} << 30);
  EXPECT_EQ(l->geometry.logical_block_shift, 9);
  EXPECT_EQ(l->geometry.physical_block_shift, 12);
  EXPECT_TRUE(l->geometry.discard);
  EXPECT_EQ(l->geometry.max_discard_bytes, uint64_t{1} << 30);
  EXPECT_TRUE(l->geometry.write_zeroes);
  // One Write Zeroes command: 64 Ki blocks of 512 bytes.
  EXPECT_EQ(l->geometry.max_write_zeroes_bytes, uint64_t{32} << 20);
  EXPECT_TRUE(l->geometry.volatile_cache);
  EXPECT_TRUE(l->geometry.fua);

  // The cap, and a segment count that allows less than the sectors do.
  g.paths[1] = Path(1, 4096, 65);
  l = LimitsOf(g, 1 << 20);
  EXPECT_EQ(l->max_io_bytes, 64u * 4096);
  g.paths[1] = Path(1, 4096, 0);
  EXPECT_EQ(LimitsOf(g, 1 << 20)->max_io_bytes, 1u << 20);
}

TEST(LimitsOfTest, FeaturesEveryPathHas) {
  NamespaceGroup g{.id = "uuid.1", .paths = {Path(0, 512, 0), Path(1, 512, 0)}};
  g.paths[1].discard_max_hw_bytes = 0;
  g.paths[0].fua = false;
  absl::StatusOr<GroupLimits> l = LimitsOf(g, 1 << 20);
  ASSERT_TRUE(l.ok());
  EXPECT_FALSE(l->geometry.discard);
  EXPECT_TRUE(l->geometry.write_zeroes);
  EXPECT_FALSE(l->geometry.fua);
  // No volatile cache: no flush, and FUA means nothing.
  for (auto& p : g.paths) p.volatile_cache = false, p.fua = true;
  l = LimitsOf(g, 1 << 20);
  EXPECT_FALSE(l->geometry.volatile_cache);
  EXPECT_FALSE(l->geometry.fua);
}

TEST(LimitsOfTest, PathsThatDisagreeAreRefused) {
  NamespaceGroup g{.id = "uuid.1", .paths = {Path(0, 512, 0), Path(1, 512, 0)}};
  g.paths[1].size_sectors += 8;
  absl::StatusOr<GroupLimits> l = LimitsOf(g, 1 << 20);
  EXPECT_TRUE(absl::IsFailedPrecondition(l.status()));
  EXPECT_EQ(l.status().message(),
            "the paths of uuid.1 disagree on size or block size (nvme0n1 and "
            "nvme1n1)");
  g.paths[1] = Path(1, 512, 0);
  g.paths[0].logical_block_size = 8192;
  EXPECT_TRUE(absl::IsFailedPrecondition(LimitsOf(g, 1 << 20).status()));
}

TEST(UblkParamsTest, DiscardAndWriteZeroesLimitsReachTheKernel) {
  ublk::Geometry geo;
  geo.size_bytes = uint64_t{4} << 30;
  geo.discard = true;
  geo.write_zeroes = true;
  ublk_params p = ublk::BuildParams(geo, 1 << 20);
  EXPECT_EQ(p.discard.max_discard_sectors, UINT32_MAX >> 9);
  EXPECT_EQ(p.discard.max_write_zeroes_sectors, UINT32_MAX >> 9);
  geo.max_discard_bytes = uint64_t{1} << 30;
  geo.max_write_zeroes_bytes = uint64_t{32} << 20;
  p = ublk::BuildParams(geo, 1 << 20);
  EXPECT_EQ(p.discard.max_discard_sectors, (uint32_t{1} << 30) >> 9);
  EXPECT_EQ(p.discard.max_write_zeroes_sectors, (uint32_t{32} << 20) >> 9);
}

}  // namespace
}  // namespace pathwise::datapath

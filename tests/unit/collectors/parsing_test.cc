// SPDX-License-Identifier: Apache-2.0
// Pure parsing: block stat files, dev ids, path→head names, SysfsReader.
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "collectors/block_stat.h"
#include "collectors/nvme_topology_collector.h"
#include "collectors/sysfs_reader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pathwise::collectors {
namespace {

using model::Op;
using ::testing::HasSubstr;

TEST(BlockStat, Parses17Fields) {
  // reads merges sectors ticks | writes merges sectors ticks | inflight
  // io_ticks queue | discards merges sectors ticks | flushes ticks
  auto s = ParseBlockStat(
      "     100        3     800      10      50        0     400       5 "
      "       2      12      15        7        0       16        4        9 "
      "       6\n");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->op(Op::kRead)->completed, 100u);
  EXPECT_EQ(s->op(Op::kRead)->bytes, 800u * 512);
  EXPECT_EQ(s->op(Op::kRead)->time_ns, 10u * 1000000);
  EXPECT_EQ(s->op(Op::kWrite)->completed, 50u);
  EXPECT_EQ(s->op(Op::kWrite)->bytes, 400u * 512);
  EXPECT_EQ(s->op(Op::kDiscard)->completed, 7u);
  EXPECT_EQ(s->op(Op::kDiscard)->bytes, 16u * 512);
  EXPECT_EQ(s->op(Op::kDiscard)->time_ns, 4u * 1000000);
  EXPECT_EQ(s->op(Op::kFlush)->completed, 9u);
  EXPECT_EQ(s->op(Op::kFlush)->bytes, 0u);
  EXPECT_EQ(s->op(Op::kFlush)->time_ns, 6u * 1000000);
  EXPECT_EQ(*s->inflight, 2u);
  EXPECT_FALSE(s->op(Op::kPassthru).has_value());
}

TEST(BlockStat, OlderLayoutsReportFewerOps) {
  auto s11 = ParseBlockStat("1 0 8 1 2 0 16 2 0 3 3");
  ASSERT_TRUE(s11.ok());
  EXPECT_TRUE(s11->op(Op::kWrite).has_value());
  EXPECT_FALSE(s11->op(Op::kDiscard).has_value());
  auto s15 = ParseBlockStat("1 0 8 1 2 0 16 2 0 3 3 4 0 32 1");
  ASSERT_TRUE(s15.ok());
  EXPECT_TRUE(s15->op(Op::kDiscard).has_value());
  EXPECT_FALSE(s15->op(Op::kFlush).has_value());
}

TEST(BlockStat, RejectsMalformed) {
  EXPECT_THAT(ParseBlockStat("").status().message(), HasSubstr("0 fields"));
  EXPECT_THAT(ParseBlockStat("1 2 3").status().message(),
              HasSubstr("3 fields"));
  EXPECT_THAT(ParseBlockStat("1 0 8 1 2 0 x 2 0 3 3").status().message(),
              HasSubstr("field 7"));
  EXPECT_FALSE(ParseBlockStat("1 0 8 1 2 0 -16 2 0 3 3").ok());
}

TEST(DevId, Parses) {
  auto d = ParseDevId("259:12");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->major, 259u);
  EXPECT_EQ(d->minor, 12u);
  EXPECT_EQ(model::ToString(*d), "259:12");
  EXPECT_FALSE(ParseDevId("259").ok());
  EXPECT_FALSE(ParseDevId("a:b").ok());
}

TEST(HeadNameOfPath, FollowsKernelNaming) {
  EXPECT_EQ(*HeadNameOfPath("nvme0c1n1"), "nvme0n1");
  EXPECT_EQ(*HeadNameOfPath("nvme12c30n7"), "nvme12n7");
  EXPECT_FALSE(HeadNameOfPath("nvme0n1").ok());
  EXPECT_FALSE(HeadNameOfPath("nvme0c1n1p1").ok());
  EXPECT_FALSE(HeadNameOfPath("sda").ok());
}

class SysfsReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/pathwise-reader-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    std::filesystem::create_directories(root_ + "/class/x");
    std::ofstream(root_ + "/class/x/num") << "  -42\n";
    std::ofstream(root_ + "/class/x/text") << "round-robin\n\n";
    std::ofstream(root_ + "/class/x/bad") << "12abc\n";
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  std::string root_;
};

TEST_F(SysfsReaderTest, ReadsRelativeToItsRoot) {
  SysfsReader r(root_ + "///");
  EXPECT_EQ(r.root(), root_);
  EXPECT_EQ(*r.ReadAttr("class/x/text"), "round-robin");
  EXPECT_EQ(*r.ReadInt("class/x/num"), -42);
  EXPECT_TRUE(r.Exists("class/x"));
  EXPECT_FALSE(r.Exists("class/y"));
  EXPECT_THAT(*r.ListDir("class/x"),
              ::testing::ElementsAre("bad", "num", "text"));
}

TEST_F(SysfsReaderTest, ErrorsNameTheAttribute) {
  SysfsReader r(root_);
  absl::Status missing = r.ReadAttr("class/x/missing").status();
  EXPECT_TRUE(absl::IsNotFound(missing));
  EXPECT_THAT(missing.message(), HasSubstr("class/x/missing"));
  absl::Status bad = r.ReadInt("class/x/bad").status();
  EXPECT_TRUE(absl::IsInvalidArgument(bad));
  EXPECT_THAT(bad.message(), HasSubstr("class/x/bad"));
}

}  // namespace
}  // namespace pathwise::collectors

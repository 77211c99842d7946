// SPDX-License-Identifier: Apache-2.0
// The model's vocabulary (model/types.h): op groups, path names, device
// numbers, which ANA states carry I/O.
#include "model/types.h"

#include <optional>

#include "gtest/gtest.h"

namespace pathwise::model {
namespace {

TEST(Types, GroupOfOp) {
  EXPECT_EQ(GroupOf(Op::kRead), OpGroup::kRead);
  EXPECT_EQ(GroupOf(Op::kWrite), OpGroup::kWrite);
  for (Op op : {Op::kFlush, Op::kDiscard, Op::kPassthru, Op::kOther}) {
    EXPECT_EQ(GroupOf(op), OpGroup::kOther) << Index(op);
  }
}

TEST(Types, NvmePathNames) {
  std::optional<NvmePathName> p = ParseNvmePathName("nvme12c3n45");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->subsystem, "12");
  EXPECT_EQ(p->controller, "3");
  EXPECT_EQ(p->ns, "45");
  EXPECT_EQ(HeadName(*p), "nvme12n45");
  for (const char* bad : {"nvme0n1", "nvme0c1n1p1", "loop0", "nvmec1n1",
                          "nvme0c1n", "nvme0cn1", ""}) {
    EXPECT_FALSE(ParseNvmePathName(bad).has_value()) << bad;
  }
}

TEST(Types, ControllerInstances) {
  EXPECT_EQ(ControllerInstance("nvme0"), 0);
  EXPECT_EQ(ControllerInstance("nvme17"), 17);
  for (const char* bad : {"nvme", "nvme0n1", "nvme0c0n1", "nvme-subsys0",
                          "nvme-fabrics", "nvme+1", "nvme 1", "loop0", ""}) {
    EXPECT_EQ(ControllerInstance(bad), -1) << bad;
  }
}

TEST(Types, DevIdFromKernelEncoding) {
  EXPECT_EQ(DevId::FromKernel((259u << 20) | 7), (DevId{259, 7}));
  EXPECT_EQ(ToString(DevId{259, 7}), "259:7");
  EXPECT_LT((DevId{7, 9}), (DevId{259, 0}));
}

TEST(Types, AnaStatesThatCarryIo) {
  EXPECT_TRUE(AnaAllowsIo(AnaState::kOptimized));
  EXPECT_TRUE(AnaAllowsIo(AnaState::kNonOptimized));
  EXPECT_TRUE(AnaAllowsIo(AnaState::kUnknown));
  EXPECT_FALSE(AnaAllowsIo(AnaState::kInaccessible));
  EXPECT_FALSE(AnaAllowsIo(AnaState::kPersistentLoss));
  EXPECT_FALSE(AnaAllowsIo(AnaState::kChange));
}

}  // namespace
}  // namespace pathwise::model

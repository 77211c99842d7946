// SPDX-License-Identifier: Apache-2.0
#include "bpf/status.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace pathwise::bpf {
namespace {

using C = NvmeStatusClass;

TEST(NvmeStatus, Success) {
  EXPECT_EQ(ClassifyNvmeStatus(0x0000), C::kSuccess);
  // DNR/More/CRD bits alone are not an error code.
  EXPECT_EQ(ClassifyNvmeStatus(0x4000), C::kSuccess);
  EXPECT_EQ(ClassifyNvmeStatus(0x2000), C::kSuccess);
  EXPECT_EQ(ClassifyNvmeStatus(0x1800), C::kSuccess);
}

TEST(NvmeStatus, GenericCommandStatus) {
  EXPECT_EQ(ClassifyNvmeStatus(0x0002), C::kGeneric);  // invalid field
  EXPECT_EQ(ClassifyNvmeStatus(0x0006), C::kGeneric);  // internal error
  EXPECT_EQ(ClassifyNvmeStatus(0x4004), C::kGeneric);  // DNR | data xfer
  EXPECT_EQ(ClassifyNvmeStatus(0x0082), C::kGeneric);  // NS not ready
}

TEST(NvmeStatus, CommandSpecific) {
  EXPECT_EQ(ClassifyNvmeStatus(0x0180), C::kCommandSpecific);  // conflicting
  EXPECT_EQ(ClassifyNvmeStatus(0x0101), C::kCommandSpecific);
}

TEST(NvmeStatus, Media) {
  EXPECT_EQ(ClassifyNvmeStatus(0x0281), C::kMedia);  // unrecovered read
  EXPECT_EQ(ClassifyNvmeStatus(0x0280), C::kMedia);  // write fault
  EXPECT_EQ(ClassifyNvmeStatus(0x4286), C::kMedia);  // DNR | access denied
}

TEST(NvmeStatus, PathRelated) {
  EXPECT_EQ(ClassifyNvmeStatus(0x0300), C::kPath);  // internal path error
  EXPECT_EQ(ClassifyNvmeStatus(0x0301), C::kPath);  // ANA persistent loss
  EXPECT_EQ(ClassifyNvmeStatus(0x0302), C::kPath);  // ANA inaccessible
  EXPECT_EQ(ClassifyNvmeStatus(0x0303), C::kPath);  // ANA transition
  EXPECT_EQ(ClassifyNvmeStatus(0x0360), C::kPath);  // controller path error
  EXPECT_EQ(ClassifyNvmeStatus(0x0370), C::kPath);  // host path error
  EXPECT_EQ(ClassifyNvmeStatus(0x0371), C::kPath);  // host aborted command
  EXPECT_EQ(ClassifyNvmeStatus(0x4370), C::kPath);  // with DNR
}

TEST(NvmeStatus, VendorAndReserved) {
  EXPECT_EQ(ClassifyNvmeStatus(0x0701), C::kVendor);
  EXPECT_EQ(ClassifyNvmeStatus(0x0401), C::kReserved);
  EXPECT_EQ(ClassifyNvmeStatus(0x0501), C::kReserved);
  EXPECT_EQ(ClassifyNvmeStatus(0x0601), C::kReserved);
}

TEST(NvmeStatus, EveryStatusHasAClass) {
  std::set<NvmeStatusClass> classes;
  for (uint32_t s = 0; s <= 0xffff; ++s) {
    classes.insert(ClassifyNvmeStatus(static_cast<uint16_t>(s)));
  }
  EXPECT_EQ(classes.size(), 7u);
}

TEST(NvmeStatus, ErrorClassOrderMatchesKernelIndices) {
  // kNvmeErrorClasses[i] is what pw_path_val.nvme_errors[i] counts.
  EXPECT_EQ(kNvmeErrorClasses[0], C::kGeneric);
  EXPECT_EQ(kNvmeErrorClasses[2], C::kMedia);
  EXPECT_EQ(kNvmeErrorClasses[3], C::kPath);
  for (size_t i = 0; i < kNvmeErrorClassCount; ++i) {
    EXPECT_EQ(model::ErrorClassIndex(kNvmeErrorClasses[i]), i);
  }
}

TEST(Ops, ReqOpNames) {
  EXPECT_EQ(OpClassForReqOpName("REQ_OP_READ"), Op::kRead);
  EXPECT_EQ(OpClassForReqOpName("REQ_OP_WRITE"), Op::kWrite);
  EXPECT_EQ(OpClassForReqOpName("REQ_OP_ZONE_APPEND"), Op::kWrite);
  EXPECT_EQ(OpClassForReqOpName("REQ_OP_FLUSH"), Op::kFlush);
  EXPECT_EQ(OpClassForReqOpName("REQ_OP_DISCARD"), Op::kDiscard);
  EXPECT_EQ(OpClassForReqOpName("REQ_OP_SECURE_ERASE"), Op::kDiscard);
  EXPECT_EQ(OpClassForReqOpName("REQ_OP_DRV_IN"), Op::kPassthru);
  EXPECT_EQ(OpClassForReqOpName("REQ_OP_DRV_OUT"), Op::kPassthru);
  EXPECT_EQ(OpClassForReqOpName("REQ_OP_WRITE_ZEROES"), Op::kOther);
  EXPECT_EQ(OpClassForReqOpName("REQ_OP_ZONE_RESET"), Op::kOther);
  EXPECT_EQ(OpClassForReqOpName("REQ_OP_LAST"), std::nullopt);
  EXPECT_EQ(OpClassForReqOpName("REQ_SYNC"), std::nullopt);
}

}  // namespace
}  // namespace pathwise::bpf

// SPDX-License-Identifier: Apache-2.0
// nvme::ClassifyForRetry: what a datapath does with each passthru result,
// by status code type, DNR, the ANA and pathing statuses, and the errnos
// of a passthru completion.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>

#include "nvme/status.h"

namespace pathwise::nvme {
namespace {

using R = RetryClass;

R Of(int32_t res) { return ClassifyForRetry(DecodePassthruResult(res)); }

TEST(RetryClassTest, Success) {
  EXPECT_EQ(Of(0), R::kNone);
  // Only CRD/More/DNR bits: SCT and SC 0 is success.
  EXPECT_EQ(Of(0x4000), R::kNone);
  EXPECT_EQ(Of(0x7800), R::kNone);
}

TEST(RetryClassTest, AnaStatusesFailOverAndDateTheAnaLog) {
  for (int32_t s : {0x301, 0x302, 0x303}) {
    EXPECT_EQ(Of(s), R::kFailoverAnaChanged) << std::hex << s;
    EXPECT_TRUE(IsAnaStatus(static_cast<uint16_t>(s)));
    // CRD and More do not change it.
    EXPECT_EQ(Of(s | 0x1800 | 0x2000), R::kFailoverAnaChanged);
  }
  EXPECT_FALSE(IsAnaStatus(0x300));
  EXPECT_FALSE(IsAnaStatus(0x304));
  EXPECT_FALSE(IsAnaStatus(0x370));
  EXPECT_FALSE(IsAnaStatus(0x102));  // SC 2 of another type
}

TEST(RetryClassTest, EveryOtherPathRelatedStatusFailsThePath) {
  // Internal, controller and host pathing errors, host aborted, and the
  // values the kernel does not name: all SCT 3 (nvme_is_path_error()).
  for (int32_t s : {0x300, 0x360, 0x370, 0x371, 0x372, 0x3ff}) {
    EXPECT_EQ(Of(s), R::kFailoverPath) << std::hex << s;
  }
  for (int32_t sc = 0; sc <= 0xff; ++sc) {
    const int32_t s = 0x300 | sc;
    const R want =
        (sc >= 1 && sc <= 3) ? R::kFailoverAnaChanged : R::kFailoverPath;
    EXPECT_EQ(Of(s), want) << std::hex << s;
  }
}

TEST(RetryClassTest, DnrIsFatalWhateverTheType) {
  // nvme_decide_disposition() checks DNR before the path check.
  for (int32_t s : {0x002, 0x00b, 0x080, 0x106, 0x281, 0x302, 0x370, 0x7ff}) {
    EXPECT_EQ(Of(0x4000 | s), R::kFatal) << std::hex << s;
  }
  // An ANA status with DNR is still news for the ANA log.
  EXPECT_TRUE(IsAnaStatus(0x4302));
}

TEST(RetryClassTest, OtherTypesWithoutDnrRetryOnTheSamePath) {
  EXPECT_EQ(Of(0x002), R::kRetrySamePath);  // generic: invalid field
  EXPECT_EQ(Of(0x082), R::kRetrySamePath);  // generic: ns not ready
  EXPECT_EQ(Of(0x021), R::kRetrySamePath);  // generic: interrupted
  EXPECT_EQ(Of(0x106), R::kRetrySamePath);  // command specific
  EXPECT_EQ(Of(0x281), R::kRetrySamePath);  // media: unrecovered read
  EXPECT_EQ(Of(0x401), R::kRetrySamePath);  // reserved type
  EXPECT_EQ(Of(0x7ff), R::kRetrySamePath);  // vendor
  // With a retry delay asked for.
  EXPECT_EQ(Of(0x0800 | 0x082), R::kRetrySamePath);
}

TEST(RetryClassTest, AuthenticationRequiredFailsOver) {
  EXPECT_EQ(Of(0x191), R::kFailoverPath);
  EXPECT_EQ(Of(0x4191), R::kFatal);
}

TEST(RetryClassTest, Errnos) {
  // Host resources: same path again.
  for (int e : {EAGAIN, EBUSY, ENOMEM}) {
    EXPECT_EQ(Of(-e), R::kRetrySamePath) << e;
  }
  // The command is wrong or not allowed anywhere.
  for (int e : {EINVAL, EFAULT, EOPNOTSUPP, ENOTTY, EPERM, EACCES, EMSGSIZE,
                E2BIG, ENOSYS}) {
    EXPECT_EQ(Of(-e), R::kFatal) << e;
  }
  // Cancelled by a reset or deletion, device gone, transport errors, and
  // what is not known: another path.
  for (int e :
       {EINTR, EIO, ENODEV, ENXIO, EBADF, ENOLINK, ETIMEDOUT, ECONNRESET,
        ECANCELED, EHOSTUNREACH, ENOTCONN, EPIPE, EREMOTEIO}) {
    EXPECT_EQ(Of(-e), R::kFailoverPath) << e;
  }
}

TEST(RetryClassTest, TheMostNegativeResultIsAnErrno) {
  // No errno the kernel has; it must decode without overflow (UBSan) and
  // fail over like any unknown errno.
  const PassthruResult r = DecodePassthruResult(INT32_MIN);
  EXPECT_EQ(r.kind, PassthruResult::Kind::kErrno);
  EXPECT_EQ(ClassifyForRetry(r), R::kFailoverPath);
  EXPECT_EQ(Of(INT32_MAX), R::kFatal);  // status 0xffff: DNR set
}

TEST(RetryClassTest, CommandRetryDelayIndex) {
  EXPECT_EQ(RetryDelayIndex(0x082), 0);
  EXPECT_EQ(RetryDelayIndex(0x0882), 1);
  EXPECT_EQ(RetryDelayIndex(0x1082), 2);
  EXPECT_EQ(RetryDelayIndex(0x1882), 3);
  EXPECT_EQ(RetryDelayIndex(0x7fff), 3);
}

TEST(RetryClassTest, Names) {
  EXPECT_STREQ(RetryClassName(R::kNone), "none");
  EXPECT_STREQ(RetryClassName(R::kRetrySamePath), "retry_same_path");
  EXPECT_STREQ(RetryClassName(R::kFailoverAnaChanged), "failover_ana");
  EXPECT_STREQ(RetryClassName(R::kFailoverPath), "failover_path");
  EXPECT_STREQ(RetryClassName(R::kFatal), "fatal");
}

}  // namespace
}  // namespace pathwise::nvme

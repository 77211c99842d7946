// SPDX-License-Identifier: Apache-2.0
// ReadNicChannels on the live kernel: the loopback device has no channels
// to report (its driver has no get_channels), a device that does not exist
// and a name no device can have fail with a reason; none of them crashes
// or yields counts.
#include "absl/status/status.h"
#include "collectors/queue_scan.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pathwise::collectors {
namespace {

using ::testing::HasSubstr;

TEST(NicChannels, LoopbackReportsNone) {
  const absl::StatusOr<model::NicChannels> ch = ReadNicChannels("lo");
  ASSERT_FALSE(ch.ok());
  EXPECT_EQ(ch.status().code(), absl::StatusCode::kUnimplemented)
      << ch.status();
  EXPECT_THAT(ch.status().message(), HasSubstr("lo: "));
}

TEST(NicChannels, NoSuchDevice) {
  const absl::StatusOr<model::NicChannels> ch =
      ReadNicChannels("pwnodev9");  // fits IFNAMSIZ, names nothing
  ASSERT_FALSE(ch.ok());
  EXPECT_EQ(ch.status().code(), absl::StatusCode::kNotFound) << ch.status();
  EXPECT_THAT(ch.status().message(), HasSubstr("pwnodev9"));
}

TEST(NicChannels, NamesNoDeviceCanHave) {
  EXPECT_EQ(ReadNicChannels("").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadNicChannels("a-name-longer-than-ifnamsiz").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadNicChannels("a/b").status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace pathwise::collectors

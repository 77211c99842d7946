// SPDX-License-Identifier: Apache-2.0
// The ublk control device's command ring (datapath/ublk/control.h) when
// io_uring_enter() refuses a command: on a regular file, which has no
// uring_cmd and answers every one EOPNOTSUPP, so no ublk_drv is needed.
// (Not /dev/null: since Linux 6.4 it answers any uring_cmd with 0, as a
// no-op does.)
#include "datapath/ublk/control.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "tests/unit/refuse_enters.h"

namespace pathwise::datapath::ublk {
namespace {

using ::pathwise::testing::FailSubmittingEnters;

// A regular file in the control device's place.
absl::StatusOr<std::unique_ptr<ControlDevice>> OpenOnAFile() {
  const std::string path = ::testing::TempDir() + "/not-ublk-control";
  std::ofstream(path).put('x');
  return ControlDevice::Open(path);
}

// Every command is sent and answered EOPNOTSUPP.
TEST(ControlDeviceTest, EveryCommandIsSentAndAnswered) {
  absl::StatusOr<std::unique_ptr<ControlDevice>> c = OpenOnAFile();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE((*c)->ioctl_encoded());  // GET_FEATURES refused
  for (int i = 0; i < 10; ++i) {
    const absl::Status s = (*c)->StopDev(7);
    EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  }
}

// A command that io_uring_enter() keeps refusing stays queued in the ring,
// pointing at the caller's buffer. It is retried for a while, then fails,
// and is not sent later with another command: it became a no-op, whose
// completion (success) the next command skips, so that one reports its own
// answer. (Before, the refused command failed at once and stayed queued,
// and the next command took whichever completion came first.)
TEST(ControlDeviceTest, ARefusedCommandIsNeitherSentLaterNorTakenForTheNext) {
  absl::StatusOr<std::unique_ptr<ControlDevice>> c = OpenOnAFile();
  ASSERT_TRUE(c.ok()) << c.status();
  absl::Status refused;
  absl::Duration took;
  std::thread t([&] {
    FailSubmittingEnters();
    const absl::Time start = absl::Now();
    refused = (*c)->DelDev(7);
    took = absl::Now() - start;
  });
  t.join();
  EXPECT_EQ(refused.code(), absl::StatusCode::kUnavailable) << refused;
  EXPECT_NE(refused.message().find("refused by io_uring_enter"),
            absl::string_view::npos)
      << refused;
  EXPECT_GE(took, absl::Seconds(1)) << "not retried";
  for (int i = 0; i < 6; ++i) {
    const absl::Status s = (*c)->StopDev(7);
    EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << i << ": " << s;
  }
}

}  // namespace
}  // namespace pathwise::datapath::ublk

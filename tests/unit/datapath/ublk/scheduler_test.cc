// SPDX-License-Identifier: Apache-2.0
#include "datapath/ublk/scheduler.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace pathwise::datapath::ublk {
namespace {

namespace fs = std::filesystem;

TEST(UblkScheduler, TheActiveOneIsInBrackets) {
  EXPECT_EQ(*ActiveScheduler("none [mq-deadline] kyber bfq\n"), "mq-deadline");
  EXPECT_EQ(*ActiveScheduler("[none] mq-deadline\n"), "none");
  // A device that offers no choice lists only its own, without brackets.
  EXPECT_EQ(*ActiveScheduler("none\n"), "none");
  EXPECT_FALSE(ActiveScheduler("").ok());
  EXPECT_FALSE(ActiveScheduler("none mq-deadline\n").ok());
  EXPECT_FALSE(ActiveScheduler("none [mq-deadline").ok());
  EXPECT_FALSE(ActiveScheduler("none [] kyber").ok());
}

TEST(UblkScheduler, NamesAreWhatTheAttributeTakes) {
  EXPECT_TRUE(ValidateSchedulerName("none").ok());
  EXPECT_TRUE(ValidateSchedulerName("mq-deadline").ok());
  EXPECT_TRUE(ValidateSchedulerName(kKernelScheduler).ok());
  EXPECT_EQ(ValidateSchedulerName("").message(),
            "--scheduler must be an I/O scheduler's name (none, mq-deadline, "
            "...) or kernel, not ''");
  EXPECT_FALSE(ValidateSchedulerName("../../x").ok());
  EXPECT_FALSE(ValidateSchedulerName("None").ok());
  EXPECT_FALSE(ValidateSchedulerName(std::string(33, 'a')).ok());
}

class UblkSchedulerFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/pathwise-sched-XXXXXX";
    root_ = mkdtemp(tmpl);
    fs::create_directories(root_ / "block/ublkb3/queue");
  }
  void TearDown() override { fs::remove_all(root_); }
  void Write(const std::string& text) {
    std::ofstream(root_ / "block/ublkb3/queue/scheduler") << text;
  }
  fs::path root_;
};

TEST_F(UblkSchedulerFiles, ReadsWhatIsInEffect) {
  Write("none [mq-deadline] \n");
  EXPECT_EQ(*ReadScheduler(root_, "ublkb3"), "mq-deadline");
  Write("garbage [\n");
  const absl::StatusOr<std::string> bad = ReadScheduler(root_, "ublkb3");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("block/ublkb3/queue/scheduler: "),
            std::string::npos)
      << bad.status();
}

TEST_F(UblkSchedulerFiles, SetWritesTheNameAndReadsItBack) {
  Write("");
  EXPECT_EQ(*SetScheduler(root_, "ublkb3", "none"), "none");
  // A disk that is not there: the error names the file.
  const absl::StatusOr<std::string> gone =
      SetScheduler(root_, "ublkb9", "none");
  ASSERT_FALSE(gone.ok());
  EXPECT_TRUE(absl::IsNotFound(gone.status())) << gone.status();
  EXPECT_NE(gone.status().message().find("block/ublkb9/queue/scheduler"),
            std::string::npos);
}

}  // namespace
}  // namespace pathwise::datapath::ublk

// SPDX-License-Identifier: Apache-2.0
// The iopolicy actuator's flags (--actuate*) and --kernel-queue-depth:
// defaults, every value stored, bad values in one line (exit 2 in the
// binary), and that they are serve's only (--kernel-queue-depth also
// snapshot's: it changes the advice).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "agent/cli.h"
#include "tests/unit/usage_error.h"

namespace pathwise::agent {
namespace {

using Args = std::vector<std::string>;

Options Parse(const Args& args) {
  return testing::ParsedOrDefault(ParseArgs(args));
}

std::string Error(const Args& args) {
  return testing::UsageError(ParseArgs(args));
}

TEST(CliActuateTest, Defaults) {
  const Options o = Parse({"serve"});
  EXPECT_EQ(o.actuate.mode, model::ActuateMode::kOff);
  EXPECT_EQ(o.actuate.hold, absl::Seconds(30));
  EXPECT_EQ(o.actuate.min_interval, absl::Minutes(5));
  EXPECT_EQ(o.actuate.subsystems, ".*");
  EXPECT_TRUE(o.actuate.restore);
  EXPECT_FALSE(o.kernel_queue_depth.has_value());
}

TEST(CliActuateTest, EveryValueIsStored) {
  Options o = Parse({"serve", "--actuate=dry-run", "--actuate-hold=3s",
                     "--actuate-min-interval=10s",
                     "--actuate-subsystems=nvme-subsys[01]",
                     "--actuate-restore=false", "--kernel-queue-depth=true"});
  EXPECT_EQ(o.actuate.mode, model::ActuateMode::kDryRun);
  EXPECT_EQ(o.actuate.hold, absl::Seconds(3));
  EXPECT_EQ(o.actuate.min_interval, absl::Seconds(10));
  EXPECT_EQ(o.actuate.subsystems, "nvme-subsys[01]");
  EXPECT_FALSE(o.actuate.restore);
  EXPECT_EQ(o.kernel_queue_depth, true);
  o = Parse({"--actuate=on", "--actuate-hold=0s", "--actuate-restore",
             "--kernel-queue-depth=false"});
  EXPECT_EQ(o.actuate.mode, model::ActuateMode::kOn);
  EXPECT_EQ(o.actuate.hold, absl::ZeroDuration());
  EXPECT_TRUE(o.actuate.restore);
  EXPECT_EQ(o.kernel_queue_depth, false);
  EXPECT_EQ(Parse({"--actuate=off"}).actuate.mode, model::ActuateMode::kOff);
  EXPECT_FALSE(
      Parse({"--kernel-queue-depth=auto"}).kernel_queue_depth.has_value());
  EXPECT_EQ(Parse({"snapshot", "--kernel-queue-depth=true"}).kernel_queue_depth,
            true);
}

TEST(CliActuateTest, BadValuesAreOneLine) {
  const std::vector<std::pair<Args, std::string>> cases = {
      {{"--actuate=yes"},
       "invalid value \"yes\" for --actuate: want off, dry-run or on"},
      {{"--actuate=dry_run"},
       "invalid value \"dry_run\" for --actuate: want off, dry-run or on"},
      {{"--actuate-hold=soon"},
       "invalid value \"soon\" for --actuate-hold: want a duration such as "
       "1s, 500ms or 1m30s"},
      {{"--actuate-hold=-1s"},
       "invalid value \"-1s\" for --actuate-hold: must not be negative"},
      {{"--actuate-min-interval=-5m"},
       "invalid value \"-5m\" for --actuate-min-interval: must not be "
       "negative"},
      {{"--actuate-subsystems=nvme-subsys["},
       "invalid value \"nvme-subsys[\" for --actuate-subsystems: not a "
       "regular expression (ECMAScript)"},
      {{"--actuate-restore=maybe"},
       "invalid value \"maybe\" for --actuate-restore: want true or false"},
      {{"--kernel-queue-depth=6.11"},
       "invalid value \"6.11\" for --kernel-queue-depth: want auto, true or "
       "false"},
  };
  for (const auto& [args, want] : cases) {
    EXPECT_EQ(Error(args), want) << args[0];
  }
}

TEST(CliActuateTest, ActuateIsServesOnly) {
  for (const char* cmd : {"snapshot", "topology"}) {
    EXPECT_TRUE(
        absl::StrContains(Error({cmd, "--actuate=on"}), "does not apply to"))
        << cmd;
  }
}

}  // namespace
}  // namespace pathwise::agent

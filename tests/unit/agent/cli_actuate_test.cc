// SPDX-License-Identifier: Apache-2.0
// The iopolicy actuator's flags (--actuate*) and --kernel_queue_depth:
// defaults, every value stored, bad values in one line (exit 2 in the
// binary), and that they are serve's only (--kernel_queue_depth also
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
  Options o = Parse({"serve", "--actuate=dry-run", "--actuate_hold=3s",
                     "--actuate_min_interval=10s",
                     "--actuate_subsystems=nvme-subsys[01]",
                     "--actuate_restore=false", "--kernel_queue_depth=true"});
  EXPECT_EQ(o.actuate.mode, model::ActuateMode::kDryRun);
  EXPECT_EQ(o.actuate.hold, absl::Seconds(3));
  EXPECT_EQ(o.actuate.min_interval, absl::Seconds(10));
  EXPECT_EQ(o.actuate.subsystems, "nvme-subsys[01]");
  EXPECT_FALSE(o.actuate.restore);
  EXPECT_EQ(o.kernel_queue_depth, true);
  o = Parse({"--actuate=on", "--actuate_hold=0s", "--actuate_restore",
             "--kernel_queue_depth=false"});
  EXPECT_EQ(o.actuate.mode, model::ActuateMode::kOn);
  EXPECT_EQ(o.actuate.hold, absl::ZeroDuration());
  EXPECT_TRUE(o.actuate.restore);
  EXPECT_EQ(o.kernel_queue_depth, false);
  EXPECT_EQ(Parse({"--actuate=off"}).actuate.mode, model::ActuateMode::kOff);
  EXPECT_FALSE(
      Parse({"--kernel_queue_depth=auto"}).kernel_queue_depth.has_value());
  EXPECT_EQ(Parse({"snapshot", "--kernel_queue_depth=true"}).kernel_queue_depth,
            true);
}

TEST(CliActuateTest, BadValuesAreOneLine) {
  const std::vector<std::pair<Args, std::string>> cases = {
      {{"--actuate=yes"},
       "invalid value \"yes\" for --actuate: want off, dry-run or on"},
      {{"--actuate=dry_run"},
       "invalid value \"dry_run\" for --actuate: want off, dry-run or on"},
      {{"--actuate_hold=soon"},
       "invalid value \"soon\" for --actuate_hold: want a duration such as "
       "1s, 500ms or 1m30s"},
      {{"--actuate_hold=-1s"},
       "invalid value \"-1s\" for --actuate_hold: must not be negative"},
      {{"--actuate_min_interval=-5m"},
       "invalid value \"-5m\" for --actuate_min_interval: must not be "
       "negative"},
      {{"--actuate_subsystems=nvme-subsys["},
       "invalid value \"nvme-subsys[\" for --actuate_subsystems: not a "
       "regular expression (ECMAScript)"},
      {{"--actuate_restore=maybe"},
       "invalid value \"maybe\" for --actuate_restore: want true or false"},
      {{"--kernel_queue_depth=6.11"},
       "invalid value \"6.11\" for --kernel_queue_depth: want auto, true or "
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

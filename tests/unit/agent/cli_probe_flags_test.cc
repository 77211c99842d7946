// SPDX-License-Identifier: Apache-2.0
// --probe-interval and --probe-timeout: defaults, values, bad values, and
// that they belong to serve only.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "agent/cli.h"

namespace pathwise::agent {
namespace {

absl::StatusOr<Options> P(const std::vector<std::string>& args) {
  return ParseArgs(args);
}

TEST(CliProbeFlagsTest, DefaultsOneSecondEveryTwoSecondsTimeout) {
  absl::StatusOr<Options> o = P({});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->probe_interval, absl::Seconds(1));
  EXPECT_EQ(o->probe_timeout, absl::Seconds(2));
}

TEST(CliProbeFlagsTest, ValuesAndOff) {
  absl::StatusOr<Options> o =
      P({"serve", "--probe-interval=500ms", "--probe-timeout=1s"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->probe_interval, absl::Milliseconds(500));
  EXPECT_EQ(o->probe_timeout, absl::Seconds(1));
  o = P({"--probe-interval=0s"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->probe_interval, absl::ZeroDuration());
}

TEST(CliProbeFlagsTest, BadValuesAreOneLineUsageErrors) {
  EXPECT_EQ(P({"--probe-interval=-1s"}).status().message(),
            "invalid value \"-1s\" for --probe-interval: must not be negative");
  EXPECT_EQ(P({"--probe-timeout=0s"}).status().message(),
            "invalid value \"0s\" for --probe-timeout: must be positive");
  EXPECT_TRUE(absl::StartsWith(P({"--probe-timeout=x"}).status().message(),
                               "invalid value \"x\" for --probe-timeout: "));
}

TEST(CliProbeFlagsTest, ServeOnly) {
  EXPECT_FALSE(P({"snapshot", "--probe-interval=1s"}).ok());
  EXPECT_FALSE(P({"topology", "--probe-timeout=1s"}).ok());
}

}  // namespace
}  // namespace pathwise::agent

// SPDX-License-Identifier: Apache-2.0
// ParseArgs' error contract for arguments holding any byte: the message is
// one line, with control characters escaped; and a stray word before the
// command is an error, not ignored (both found by tests/fuzz/fuzz_cli).
#include <string>
#include <vector>

#include "agent/cli.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pathwise::agent {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(CliEscapeTest, NewlineInAnUnknownCommandStaysOnOneLine) {
  absl::StatusOr<Options> o = ParseArgs({"he\nl0&pA", "snapyhot"});
  ASSERT_FALSE(o.ok());
  EXPECT_THAT(std::string(o.status().message()), Not(HasSubstr("\n")));
  EXPECT_THAT(std::string(o.status().message()), HasSubstr("he\\nl0"));
}

TEST(CliEscapeTest, ControlBytesInAFlagValueAreEscaped) {
  absl::StatusOr<Options> o = ParseArgs({"--interval=1\x1b[2Js\r"});
  ASSERT_FALSE(o.ok());
  const std::string m(o.status().message());
  EXPECT_THAT(m, Not(HasSubstr("\x1b")));
  EXPECT_THAT(m, Not(HasSubstr("\r")));
  EXPECT_THAT(m, HasSubstr("1\\x1b[2Js\\x0d"));
}

TEST(CliEscapeTest, PrintableMessagesAreUnchanged) {
  absl::StatusOr<Options> o = ParseArgs({"--interval=abc"});
  ASSERT_FALSE(o.ok());
  EXPECT_THAT(std::string(o.status().message()), HasSubstr("\"abc\""));
  EXPECT_THAT(std::string(o.status().message()), Not(HasSubstr("\\x")));
}

TEST(CliEscapeTest, AWordBeforeTheCommandIsAnError) {
  for (const char* cmd : {"snapshot", "topology", "serve", "lab"}) {
    absl::StatusOr<Options> o = ParseArgs({"foo", cmd});
    ASSERT_FALSE(o.ok()) << cmd;
    EXPECT_THAT(std::string(o.status().message()),
                HasSubstr("unexpected argument \"foo\""))
        << cmd;
  }
}

}  // namespace
}  // namespace pathwise::agent

// SPDX-License-Identifier: Apache-2.0
// `pathwise queues` and the --queues opt-in: defaults, values, bad values
// as one-line usage errors, and which commands take which flag.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/cli.h"

namespace pathwise::agent {
namespace {

absl::StatusOr<Options> P(const std::vector<std::string>& args) {
  return ParseArgs(args);
}

std::string Error(const std::vector<std::string>& args) {
  return std::string(P(args).status().message());
}

TEST(CliQueuesTest, Defaults) {
  absl::StatusOr<Options> o = P({"queues"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->command, Command::kQueues);
  EXPECT_EQ(o->format, "text");
  EXPECT_FALSE(o->queues_plan);
  EXPECT_EQ(o->bpf, BpfMode::kAuto);
  EXPECT_EQ(o->sysfs_root, "/sys");
  o = P({"serve"});
  ASSERT_TRUE(o.ok());
  EXPECT_FALSE(o->queues);
}

TEST(CliQueuesTest, Values) {
  absl::StatusOr<Options> o = P({"queues", "--format=json", "--plan",
                                 "--bpf=off", "--path.sysfs=/tmp/sys"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->format, "json");
  EXPECT_TRUE(o->queues_plan);
  EXPECT_EQ(o->bpf, BpfMode::kOff);
  EXPECT_EQ(o->sysfs_root, "/tmp/sys");
  o = P({"serve", "--queues"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_TRUE(o->queues);
  o = P({"snapshot", "--queues=true"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_TRUE(o->queues);
  EXPECT_TRUE(P({"--queues"})->queues);  // serve is the default command
}

TEST(CliQueuesTest, BadValuesAndWrongCommands) {
  EXPECT_EQ(Error({"queues", "--format=xml"}),
            "invalid value \"xml\" for --format: queues wants text or json");
  EXPECT_EQ(Error({"queues", "--bpf=maybe"}),
            "invalid value \"maybe\" for --bpf: want auto, required or off");
  EXPECT_EQ(Error({"queues", "--plan=yes"}),
            "invalid value \"yes\" for --plan: want true or false");
  // As for the other commands.
  EXPECT_EQ(Error({"queues", "--path.sysfs="}),
            "flag --path.sysfs needs a value");
  EXPECT_EQ(Error({"topology", "--path.sysfs="}),
            "flag --path.sysfs needs a value");
  EXPECT_EQ(Error({"topology", "--queues"}),
            "flag --queues does not apply to 'pathwise topology' "
            "(see 'pathwise topology --help')");
  EXPECT_EQ(Error({"queues", "--queues"}),
            "flag --queues does not apply to 'pathwise queues' "
            "(see 'pathwise queues --help')");
  EXPECT_EQ(Error({"snapshot", "--plan"}),
            "flag --plan does not apply to 'pathwise snapshot' "
            "(see 'pathwise snapshot --help')");
  EXPECT_EQ(Error({"queues", "extra"}),
            "unexpected argument \"extra\" (see 'pathwise queues --help')");
}

TEST(CliQueuesTest, InTheHelp) {
  EXPECT_NE(HelpText().find("  queues "), std::string::npos);
  EXPECT_NE(P({"queues", "--help"})->help.find("--plan"), std::string::npos);
  EXPECT_NE(P({"serve", "--help"})->help.find("--queues"), std::string::npos);
}

}  // namespace
}  // namespace pathwise::agent

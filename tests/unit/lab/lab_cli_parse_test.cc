// SPDX-License-Identifier: Apache-2.0
// lab's flags (AddLabFlags) parsed in-process: defaults, every flag, each
// check's one-line message, help, and the flags mounted on a subcommand of
// another App as the agent does.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "lab/lab_cli.h"
#include "lab/sim.h"
#include "tests/unit/usage_error.h"

namespace pathwise::lab {
namespace {

using Args = std::vector<std::string>;

std::string Error(const Args& args) {
  return testing::UsageError(ParseLabArgs(args));
}

TEST(LabCliParseTest, Defaults) {
  absl::StatusOr<LabOptions> o = ParseLabArgs({"--scenario=a.scn"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->scenario, "a.scn");
  EXPECT_EQ(o->policies, policy::AllPolicies());
  EXPECT_FALSE(o->seed.has_value());
  EXPECT_EQ(o->format, "table");
  EXPECT_EQ(o->jobs, 0);
  EXPECT_FALSE(o->help);
}

TEST(LabCliParseTest, EveryFlag) {
  absl::StatusOr<LabOptions> o = ParseLabArgs(
      {"--scenario", "b.scn", "--policies", "hst,round-robin",
       "--seed=18446744073709551615", "--format", "json", "--jobs=1024"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->scenario, "b.scn");
  EXPECT_EQ(o->policies,
            (std::vector<policy::Policy>{policy::Policy::kHst,
                                         policy::Policy::kRoundRobin}));
  EXPECT_EQ(o->seed, 18446744073709551615u);
  EXPECT_EQ(o->format, "json");
  EXPECT_EQ(o->jobs, 1024);

  o = ParseLabArgs({"--scenario=c", "--policies=numa,all", "--seed=0"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->policies.size(), 1 + policy::AllPolicies().size());
  EXPECT_EQ(o->policies.front(), policy::Policy::kNuma);
  EXPECT_EQ(o->seed, 0u);
}

TEST(LabCliParseTest, BadValuesAreOneLine) {
  EXPECT_EQ(Error({}), "lab: --scenario FILE is required");
  EXPECT_EQ(Error({"--seed=1"}), "lab: --scenario FILE is required");
  EXPECT_EQ(Error({"--scenario", ""}), "lab: --scenario is empty");
  EXPECT_EQ(Error({"--scenario"}), "lab: --scenario needs a value");
  EXPECT_EQ(Error({"--scenario=x", "--policies=numa,fastest"}),
            "lab: --policies: unknown policy 'fastest' (want numa, "
            "round-robin, queue-depth, latency, pathwise, hst or all)");
  EXPECT_EQ(Error({"--scenario=x", "--seed=-1"}),
            "lab: --seed: want a non-negative integer, got '-1'");
  EXPECT_EQ(Error({"--scenario=x", "--seed=x"}),
            "lab: --seed: want a non-negative integer, got 'x'");
  EXPECT_EQ(Error({"--scenario=x", "--format=xml"}),
            "lab: --format: want table, csv or json, got 'xml'");
  EXPECT_EQ(Error({"--scenario=x", "--jobs=1025"}),
            "lab: --jobs: want 0..1024, got '1025'");
  EXPECT_EQ(Error({"--scenario=x", "--jobs=-1"}),
            "lab: --jobs: want 0..1024, got '-1'");
  EXPECT_EQ(Error({"--scenario=x", "--bogus=1"}), "lab: unknown flag --bogus");
  EXPECT_EQ(Error({"--scenario=x", "stray"}),
            "lab: unexpected argument 'stray'");
}

TEST(LabCliParseTest, Help) {
  for (const Args& args :
       {Args{"--help"}, Args{"-h"}, Args{"--jobs=2", "-h"}}) {
    absl::StatusOr<LabOptions> o = ParseLabArgs(args);
    ASSERT_TRUE(o.ok()) << o.status();
    EXPECT_TRUE(o->help);
  }
  const std::string help = LabHelpText();
  for (const char* want :
       {"pathwise lab", "--scenario FILE", "--policies LIST=all", "--seed N",
        "--format F=table", "--jobs N=0", "lab/scenarios/"}) {
    EXPECT_NE(help.find(want), std::string::npos) << want;
  }
}

TEST(LabCliParseTest, GenerateNeedsOutAndNoScenario) {
  absl::StatusOr<LabOptions> o = ParseLabArgs({"--generate=5", "--out=d"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->generate, 5);
  EXPECT_EQ(o->out_dir, "d");
  EXPECT_EQ(Error({"--generate=5"}),
            "lab: --generate N needs --out DIR for its files");
  EXPECT_EQ(Error({"--generate=5", "--out=d", "--scenario=x.scn"}),
            "lab: --generate draws scenarios, --scenario runs one: not both");
  EXPECT_EQ(Error({"--out=d", "--scenario=x.scn"}),
            "lab: --out is for --generate");
  EXPECT_EQ(Error({"--generate=0", "--out=d"}),
            "lab: --generate: want 1..100000, got '0'");
}

TEST(LabCliParseTest, LeagueAndPlot) {
  absl::StatusOr<LabOptions> o =
      ParseLabArgs({"--league=300", "--seed=2", "--plot=l.svg"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->league, 300);
  EXPECT_EQ(o->plot, "l.svg");
  EXPECT_EQ(Error({"--league=0"}), "lab: --league: want 1..100000, got '0'");
  EXPECT_EQ(Error({"--league=x"}), "lab: --league: want 1..100000, got 'x'");
  EXPECT_EQ(Error({"--league=3", "--scenario=x.scn"}),
            "lab: --league runs drawn scenarios: not with --scenario or "
            "--generate");
  EXPECT_EQ(Error({"--league=3", "--generate=3", "--out=d"}),
            "lab: --league runs drawn scenarios: not with --scenario or "
            "--generate");
  EXPECT_EQ(Error({"--league=3", "--out=d"}), "lab: --out is for --generate");
  EXPECT_EQ(Error({"--generate=3", "--out=d", "--plot=l.svg"}),
            "lab: --plot is for a --scenario run or --league");
  EXPECT_EQ(Error({"--league=3", "--plot", ""}), "lab: --plot is empty");
  EXPECT_EQ(Error({"--scenario=x.scn", "--csv=l.csv"}),
            "lab: --csv is for --league");
}

// As the agent mounts them: on a subcommand, beside flags of other
// subcommands, checked by CheckLabArgs after the parse.
TEST(LabCliParseTest, FlagsOnASubcommand) {
  LabOptions o;
  CLI::App app;
  std::string other;
  app.add_subcommand("other")->add_option("--other", other);
  CLI::App* lab = app.add_subcommand("lab");
  AddLabFlags(*lab, &o);
  std::vector<std::string> args = {"lab", "--scenario=s.scn", "--jobs=3",
                                   "--other=1"};
  std::reverse(args.begin(), args.end());
  ASSERT_NO_THROW(app.parse(args));
  EXPECT_EQ(o.scenario, "s.scn");
  EXPECT_EQ(o.jobs, 3);
  EXPECT_EQ(CheckLabArgs(*lab, o).message(), "lab: unknown flag --other");

  LabOptions bad;
  CLI::App app2;
  CLI::App* lab2 = app2.add_subcommand("lab");
  AddLabFlags(*lab2, &bad);
  args = {"--format=xml", "lab"};
  try {
    app2.parse(args);
    ADD_FAILURE() << "parsed";
  } catch (const CLI::ParseError& e) {
    EXPECT_EQ(LabUsageError(e).message(),
              "lab: --format: want table, csv or json, got 'xml'");
  }
}

}  // namespace
}  // namespace pathwise::lab

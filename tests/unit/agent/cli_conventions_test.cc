// SPDX-License-Identifier: Apache-2.0
// The exporter conventions of the command line: the exporter-toolkit
// spellings (--web.listen-address, --path.sysfs, --log.level,
// --log.format), the former names as deprecated aliases that still parse,
// `-` and `_` alike, and "did you mean" for a misspelled flag or command.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "agent/cli.h"
#include "tests/unit/usage_error.h"

namespace pathwise::agent {
namespace {

using Args = std::vector<std::string>;
using ::pathwise::testing::ParsedOrDefault;

Options Parse(const Args& args) { return ParsedOrDefault(ParseArgs(args)); }
std::string Error(const Args& args) {
  return ::pathwise::testing::UsageError(ParseArgs(args));
}

TEST(CliConventionsTest, ExporterToolkitSpellings) {
  const Options o =
      Parse({"serve", "--web.listen-address=127.0.0.1:9000",
             "--path.sysfs=/tmp/sys", "--log.level=debug", "--log.format=json",
             "--web.max-connections=9", "--web.max-connections-per-client=3"});
  EXPECT_EQ(o.listen_address, "127.0.0.1:9000");
  EXPECT_EQ(o.sysfs_root, "/tmp/sys");
  EXPECT_EQ(o.log_level, "debug");
  EXPECT_EQ(o.log_format, "json");
  EXPECT_EQ(o.web_max_connections, 9);
  EXPECT_EQ(o.web_max_connections_per_client, 3);
  EXPECT_TRUE(o.deprecated_flags.empty());
  EXPECT_EQ(Parse({"serve"}).log_format, "logfmt");
  EXPECT_EQ(Error({"--log.format=text"}),
            "invalid value \"text\" for --log.format: want logfmt or json");
}

// The former names parse as before, into the same options, and each one
// used is noted once for the deprecation warning.
TEST(CliConventionsTest, FormerNamesStillParseAndAreDeprecated) {
  const Options o =
      Parse({"serve", "--listen_address=127.0.0.1:9000", "--sysfs_root=/s",
             "--log_level=warn", "--listen_address=127.0.0.1:9001"});
  EXPECT_EQ(o.listen_address, "127.0.0.1:9001");
  EXPECT_EQ(o.sysfs_root, "/s");
  EXPECT_EQ(o.log_level, "warn");
  EXPECT_EQ(o.deprecated_flags,
            (std::vector<std::string>{
                "flag --listen_address is deprecated, use --web.listen-address",
                "flag --sysfs_root is deprecated, use --path.sysfs",
                "flag --log_level is deprecated, use --log.level"}));
  for (const char* command : {"snapshot", "topology", "queues", "top"}) {
    const Options c =
        Parse({command, "--sysfs_root", "/s", "--log_level=error"});
    EXPECT_EQ(c.sysfs_root, "/s") << command;
    EXPECT_EQ(c.log_level, "error") << command;
    EXPECT_EQ(c.deprecated_flags.size(), 2u) << command;
  }
  // The new name wins over the former one on the same command line.
  EXPECT_EQ(
      Parse({"--web.listen-address=:1", "--listen_address=:2"}).listen_address,
      ":1");
  // Their values are checked as the new names' are, in the words typed.
  EXPECT_EQ(Error({"--listen_address=:99999"}),
            "invalid value \":99999\" for --listen_address: bad port "
            "\"99999\"");
  EXPECT_EQ(Error({"--log_level=loud"}),
            "invalid value \"loud\" for --log_level: want debug, info, warn "
            "or error");
  EXPECT_EQ(Error({"--listen_address"}), "flag --listen_address needs a value");

  const Options d = Parse({"datapath", "--namespace=auto",
                           "--listen_address=:9", "--sysfs_root=/s"});
  EXPECT_EQ(d.datapath.listen_address, ":9");
  EXPECT_EQ(d.datapath.sysfs_root, "/s");
  EXPECT_EQ(d.datapath_flags.deprecated.size(), 2u);
  EXPECT_TRUE(Parse({"datapath", "--namespace=auto", "--web.listen-address=:9"})
                  .datapath_flags.deprecated.empty());
}

TEST(CliConventionsTest, DashAndUnderscoreAlike) {
  EXPECT_EQ(Parse({"--probe_interval=3s"}).probe_interval, absl::Seconds(3));
  EXPECT_EQ(Parse({"--probe-interval=3s"}).probe_interval, absl::Seconds(3));
  EXPECT_EQ(Parse({"--web.max_connections_per_client", "7"})
                .web_max_connections_per_client,
            7);
  EXPECT_EQ(Parse({"--log.format=json", "--ewma_shift=2"}).scoring.ewma_shift,
            2);
  EXPECT_TRUE(Parse({"--bpf_stats"}).bpf_stats);
  EXPECT_TRUE(Parse({"--probe_interval=1s"}).deprecated_flags.empty());
  EXPECT_EQ(Parse({"datapath", "--namespace=auto", "--io_timeout=3s"})
                .datapath.io_timeout,
            absl::Seconds(3));
  // Values are left as typed.
  EXPECT_EQ(Parse({"--path.sysfs=/a_b"}).sysfs_root, "/a_b");
  // Errors name the flag as it was typed.
  EXPECT_EQ(Error({"--ewma_shift"}), "flag --ewma_shift needs a value");
  EXPECT_EQ(Error({"topology", "--ewma_shift=1"}),
            "flag --ewma_shift does not apply to 'pathwise topology' (see "
            "'pathwise topology --help')");
}

TEST(CliConventionsTest, DidYouMean) {
  EXPECT_EQ(Error({"--intervall=1s"}),
            "unknown flag --intervall: did you mean --interval? (see "
            "'pathwise serve --help')");
  EXPECT_EQ(Error({"snapshot", "--sysfs=/s"}),
            "unknown flag --sysfs: did you mean --path.sysfs? (see "
            "'pathwise snapshot --help')");
  EXPECT_EQ(Error({"--listen-adress=:1"}),
            "unknown flag --listen-adress: did you mean --web.listen-address? "
            "(see 'pathwise serve --help')");
  EXPECT_EQ(Error({"top", "--log_levl=info"}),
            "unknown flag --log_levl: did you mean --log.level? (see "
            "'pathwise top --help')");
  EXPECT_EQ(Error({"--web.listen_adress=:1"}),
            "unknown flag --web.listen_adress: did you mean "
            "--web.listen-address? (see 'pathwise serve --help')");
  // Nothing close: no guess.
  EXPECT_EQ(Error({"--frobnicate"}),
            "unknown flag --frobnicate (see 'pathwise serve --help')");
  EXPECT_EQ(Error({"topolgy"}),
            "unknown command \"topolgy\": did you mean topology? (want serve, "
            "snapshot, topology, queues, top, lab or datapath; see 'pathwise "
            "--help')");
  EXPECT_EQ(Error({"datapath", "--namespace=auto", "--polcy=pathwise"}),
            "unknown flag --polcy: did you mean --policy? (see 'pathwise "
            "datapath --help')");
}

// Every flag in the reference follows the rule: lower-case words joined
// by '-', in a group (web., path., log.) where the exporters have one.
TEST(CliConventionsTest, EveryFlagNameFollowsTheRule) {
  const std::regex rule(
      "--((web|path|log)\\.)?[a-z0-9]+(-[a-z0-9]+)*(\\.[a-z0-9]+(-[a-z0-9]+)*)"
      "*");
  int flags = 0;
  for (absl::string_view line : absl::StrSplit(FlagReferenceMarkdown(), '\n')) {
    if (!absl::StartsWith(line, "- `--")) continue;
    ++flags;
    std::string name(line.substr(3, line.find_first_of("=`", 3) - 3));
    EXPECT_TRUE(std::regex_match(name, rule)) << name;
  }
  EXPECT_GT(flags, 60);
}

}  // namespace
}  // namespace pathwise::agent

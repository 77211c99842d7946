// SPDX-License-Identifier: Apache-2.0
// The `pathwise` command line parsed in-process: defaults per command, every
// validator's one-line message, flags that do not apply, help and version,
// and the lab subcommand.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "agent/cli.h"
#include "lab/sim.h"
#include "tests/unit/usage_error.h"

namespace pathwise::agent {
namespace {

using Args = std::vector<std::string>;

Options Parse(const Args& args) {
  return testing::ParsedOrDefault(ParseArgs(args));
}

// The usage error of `args`; fails the test if they parse.
std::string Error(const Args& args) {
  return testing::UsageError(ParseArgs(args));
}

TEST(CliParseTest, ServeIsTheDefaultWithTheFlagDefaults) {
  for (const Args& args : {Args{}, Args{"serve"}}) {
    const Options o = Parse(args);
    EXPECT_EQ(o.command, Command::kServe);
    EXPECT_EQ(o.listen_address, ":9877");
    EXPECT_EQ(o.web_max_connections_per_client, 512);
    EXPECT_EQ(o.web_max_connections, 1024);
    EXPECT_EQ(o.interval, absl::Seconds(1));
    EXPECT_EQ(o.sysfs_root, "/sys");
    EXPECT_EQ(o.bpf, BpfMode::kAuto);
    EXPECT_FALSE(o.bpf_stats);
    EXPECT_EQ(o.devices, "nvme");
    EXPECT_EQ(o.log_level, "info");
    EXPECT_EQ(o.format, "");
    const scoring::Config def;
    EXPECT_EQ(o.scoring.ewma_shift, def.ewma_shift);
    EXPECT_EQ(o.scoring.degraded_ratio, def.degraded_ratio);
    EXPECT_EQ(o.scoring.degraded_windows, def.degraded_windows);
    EXPECT_EQ(o.scoring.idle_windows, def.idle_windows);
    EXPECT_EQ(o.scoring.recover_windows, def.recover_windows);
    EXPECT_EQ(o.scoring.reseed_ratio, def.reseed_ratio);
  }
}

TEST(CliParseTest, SnapshotAndTopologyDefaults) {
  Options o = Parse({"snapshot"});
  EXPECT_EQ(o.command, Command::kSnapshot);
  EXPECT_EQ(o.duration, absl::Seconds(2));
  EXPECT_EQ(o.format, "prometheus");
  EXPECT_EQ(o.interval, absl::Seconds(1));
  o = Parse({"topology"});
  EXPECT_EQ(o.command, Command::kTopology);
  EXPECT_EQ(o.format, "text");
  EXPECT_EQ(o.sysfs_root, "/sys");
}

TEST(CliParseTest, FlagsWithoutCommandAreServes) {
  const Options o =
      Parse({"--web.listen-address=127.0.0.1:9000", "--interval", "500ms",
             "--bpf-stats", "--web.max-connections-per-client=0"});
  EXPECT_EQ(o.command, Command::kServe);
  EXPECT_EQ(o.web_max_connections_per_client, 0);
  EXPECT_EQ(o.listen_address, "127.0.0.1:9000");
  EXPECT_EQ(o.interval, absl::Milliseconds(500));
  EXPECT_TRUE(o.bpf_stats);
}

TEST(CliParseTest, EveryFlagIsStored) {
  const Options o =
      Parse({"snapshot", "--duration=0s", "--format=json", "--interval=250ms",
             "--path.sysfs=/tmp/sys", "--bpf=required", "--bpf-stats=true",
             "--devices=all", "--ewma-shift=0", "--degraded-ratio=2.5",
             "--degraded-windows=4", "--idle-windows", "7",
             "--recover-windows=9", "--reseed-ratio=0", "--log.level=debug"});
  EXPECT_EQ(o.command, Command::kSnapshot);
  EXPECT_EQ(o.duration, absl::ZeroDuration());
  EXPECT_EQ(o.format, "json");
  EXPECT_EQ(o.interval, absl::Milliseconds(250));
  EXPECT_EQ(o.sysfs_root, "/tmp/sys");
  EXPECT_EQ(o.bpf, BpfMode::kRequired);
  EXPECT_TRUE(o.bpf_stats);
  EXPECT_EQ(o.devices, "all");
  EXPECT_EQ(o.scoring.ewma_shift, 0);
  EXPECT_EQ(o.scoring.degraded_ratio, 2.5);
  EXPECT_EQ(o.scoring.degraded_windows, 4);
  EXPECT_EQ(o.scoring.idle_windows, 7);
  EXPECT_EQ(o.scoring.recover_windows, 9);
  EXPECT_EQ(o.scoring.reseed_ratio, 0);
  EXPECT_EQ(o.log_level, "debug");
  EXPECT_EQ(Parse({"topology", "--format", "json"}).format, "json");
  EXPECT_EQ(Parse({"--bpf=off"}).bpf, BpfMode::kOff);
}

TEST(CliParseTest, BoolFlagTakesExplicitValuesAndTheLastValueWins) {
  EXPECT_FALSE(Parse({"--bpf-stats=false"}).bpf_stats);
  EXPECT_TRUE(Parse({"--bpf-stats=false", "--bpf-stats"}).bpf_stats);
  EXPECT_EQ(Parse({"--interval=1s", "--interval=3s"}).interval,
            absl::Seconds(3));
}

TEST(CliParseTest, ParsesDoNotShareState) {
  EXPECT_EQ(Parse({"--interval=5s", "--ewma-shift=1"}).interval,
            absl::Seconds(5));
  const Options o = Parse({});
  EXPECT_EQ(o.interval, absl::Seconds(1));
  EXPECT_EQ(o.scoring.ewma_shift, scoring::Config{}.ewma_shift);
}

TEST(CliParseTest, ValidatorsRejectBadValuesInOneLine) {
  struct Case {
    Args args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--interval=abc"},
       "invalid value \"abc\" for --interval: want a duration such as 1s, "
       "500ms or 1m30s"},
      {{"serve", "--interval=0s"},
       "invalid value \"0s\" for --interval: must be positive"},
      {{"--interval=-1s"},
       "invalid value \"-1s\" for --interval: must be positive"},
      {{"--bpf=maybe"},
       "invalid value \"maybe\" for --bpf: want auto, required or off"},
      {{"--bpf-stats=maybe"},
       "invalid value \"maybe\" for --bpf-stats: want true or false"},
      {{"--devices=sd"},
       "invalid value \"sd\" for --devices: want nvme or all"},
      {{"snapshot", "--duration=-1s"},
       "invalid value \"-1s\" for --duration: must not be negative"},
      {{"snapshot", "--duration=2"},
       "invalid value \"2\" for --duration: want a duration such as 1s, "
       "500ms or 1m30s"},
      {{"snapshot", "--format=xml"},
       "invalid value \"xml\" for --format: snapshot wants prometheus or "
       "json"},
      {{"topology", "--format=prometheus"},
       "invalid value \"prometheus\" for --format: topology wants text or "
       "json"},
      {{"--log.level=loud"},
       "invalid value \"loud\" for --log.level: want debug, info, warn or "
       "error"},
      {{"--web.max-connections-per-client=-1"},
       "invalid value \"-1\" for --web.max-connections-per-client: want 0 "
       "(no limit) to 1024"},
      {{"--ewma-shift=17"},
       "invalid value \"17\" for --ewma-shift: want 0 to 16"},
      {{"--ewma-shift=-1"},
       "invalid value \"-1\" for --ewma-shift: want 0 to 16"},
      {{"snapshot", "--ewma-shift=x"},
       "invalid value \"x\" for --ewma-shift: want an integer"},
      {{"--degraded-ratio=1"},
       "invalid value \"1\" for --degraded-ratio: must be a number above 1"},
      {{"--degraded-ratio=nan"},
       "invalid value \"nan\" for --degraded-ratio: must be a number above 1"},
      {{"--degraded-ratio=inf"},
       "invalid value \"inf\" for --degraded-ratio: must be a number above 1"},
      {{"--degraded-ratio=x"},
       "invalid value \"x\" for --degraded-ratio: want a number"},
      {{"--degraded-windows=0"},
       "invalid value \"0\" for --degraded-windows: must be >= 1"},
      {{"snapshot", "--idle-windows=-3"},
       "invalid value \"-3\" for --idle-windows: must be >= 1"},
      {{"--recover-windows=0"},
       "invalid value \"0\" for --recover-windows: must be >= 1"},
      {{"--reseed-ratio=0.5"},
       "invalid value \"0.5\" for --reseed-ratio: want 0 (off) or above 1"},
      {{"topology", "--path.sysfs", ""},
       "invalid value \"\" for --path.sysfs: must not be empty"},
      {{"--web.listen-address"}, "flag --web.listen-address needs a value"},
      {{"snapshot", "--duration"}, "flag --duration needs a value"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Error(c.args), c.message) << c.args.back();
  }
}

TEST(CliParseTest, ListenAddressSyntaxIsCheckedAtParseTime) {
  // A bad address is a usage error (exit 2) like any other bad flag, not a
  // failure to start the server (exit 1).
  for (const char* good : {":9877", "127.0.0.1:0", "0.0.0.0:65535",
                           "localhost:9877", "node-1.example.org:9877"}) {
    EXPECT_EQ(
        Parse({absl::StrCat("--web.listen-address=", good)}).listen_address,
        good);
  }
  for (const std::string bad :
       {"abc", "9877", ":99999", ":-1", ":port", "127.0.0.1:", "::1:9877",
        "999.1.1.1:9877", "1.2.3:9877", "a b:9877", "-host:9877", "[zz]:9877",
        "[:9877", "[1.2.3.4:9877"}) {
    const std::string message = Error({"serve", "--web.listen-address", bad});
    const std::string prefix =
        absl::StrCat("invalid value \"", bad, "\" for --web.listen-address: ");
    EXPECT_EQ(message.substr(0, prefix.size()), prefix) << message;
    EXPECT_GT(message.size(), prefix.size()) << message;  // says what is wrong
    // The reason is not the value named twice.
    EXPECT_EQ(message.find("invalid --web.listen-address"), std::string::npos)
        << message;
  }
  EXPECT_EQ(Error({"--web.listen-address=:99999"}),
            "invalid value \":99999\" for --web.listen-address: bad port "
            "\"99999\"");
  // A lenient reading (sscanf) would listen on 231.1.1.1.
  EXPECT_EQ(
      Error({"--web.listen-address=999.1.1.1:9877"}),
      "invalid value \"999.1.1.1:9877\" for --web.listen-address: bad IPv4 "
      "address \"999.1.1.1\" (want four numbers 0..255)");
}

TEST(CliParseTest, FlagOfAnotherCommandDoesNotApply) {
  EXPECT_EQ(Error({"topology", "--web.listen-address=:1"}),
            "flag --web.listen-address does not apply to 'pathwise topology' "
            "(see 'pathwise topology --help')");
  EXPECT_EQ(Error({"topology", "--duration=1s"}),
            "flag --duration does not apply to 'pathwise topology' "
            "(see 'pathwise topology --help')");
  EXPECT_EQ(Error({"topology", "--ewma-shift", "2"}),
            "flag --ewma-shift does not apply to 'pathwise topology' "
            "(see 'pathwise topology --help')");
  EXPECT_EQ(Error({"serve", "--format=json"}),
            "flag --format does not apply to 'pathwise serve' "
            "(see 'pathwise serve --help')");
  EXPECT_EQ(Error({"--duration=1s"}),
            "flag --duration does not apply to 'pathwise serve' "
            "(see 'pathwise serve --help')");
  EXPECT_EQ(Error({"snapshot", "--scenario=x.scn"}),
            "flag --scenario does not apply to 'pathwise snapshot' "
            "(see 'pathwise snapshot --help')");
}

TEST(CliParseTest, UnknownFlagsCommandsAndArguments) {
  EXPECT_EQ(Error({"--bogus"}),
            "unknown flag --bogus (see 'pathwise serve --help')");
  EXPECT_EQ(Error({"snapshot", "--bogus=1"}),
            "unknown flag --bogus (see 'pathwise snapshot --help')");
  EXPECT_EQ(Error({"-x"}), "unknown flag -x (see 'pathwise serve --help')");
  EXPECT_EQ(Error({"frobnicate"}),
            "unknown command \"frobnicate\" (want serve, snapshot, topology, "
            "queues, top, lab or datapath; see 'pathwise --help')");
  EXPECT_EQ(Error({"snapshot", "extra"}),
            "unexpected argument \"extra\" (see 'pathwise snapshot --help')");
  EXPECT_EQ(Error({"--interval=1s", "snapshot"}),
            "unexpected argument \"snapshot\" (see 'pathwise serve --help')");
  EXPECT_EQ(Error({"serve", "topology"}),
            "unexpected argument \"topology\" (see 'pathwise serve --help')");
}

TEST(CliParseTest, HelpOfTheBinaryAndOfACommand) {
  for (const Args& args : {Args{"--help"}, Args{"-h"}, Args{"help"}}) {
    const Options o = Parse(args);
    EXPECT_EQ(o.command, Command::kHelp);
    EXPECT_EQ(o.help, HelpText());
  }
  // The binary's help: the commands and the global flags, not every flag.
  const std::string top = HelpText();
  for (const char* want :
       {"  serve ", "  snapshot ", "  topology ", "  queues ", "  top ",
        "  lab ", "  datapath ", "  help ", "  version ", "--version",
        "pathwise COMMAND --help", "Exit status"}) {
    EXPECT_NE(top.find(want), std::string::npos) << want;
  }
  EXPECT_EQ(top.find("--web.listen-address"), std::string::npos) << top;
  EXPECT_LE(std::count(top.begin(), top.end(), '\n'), 35) << top;
  for (absl::string_view line : absl::StrSplit(top, '\n')) {
    EXPECT_LE(line.size(), 80u) << line;
  }

  const Options serve = Parse({"serve", "--help"});
  for (const char* want :
       {"--web.listen-address [HOST]:PORT=:9877", "--interval DURATION=1s",
        "--bpf auto|required|off=auto", "--path.sysfs DIR=/sys",
        "--reseed-ratio RATIO=3", "--log.format logfmt|json=logfmt"}) {
    EXPECT_NE(serve.help.find(want), std::string::npos) << want;
  }
  // Former names are hidden.
  EXPECT_EQ(serve.help.find("listen_address"), std::string::npos);
  EXPECT_EQ(serve.help.find("--listen-address"), std::string::npos);
  const Options snap = Parse({"snapshot", "--help"});
  EXPECT_EQ(snap.command, Command::kHelp);
  EXPECT_NE(snap.help.find("--duration DURATION=2s"), std::string::npos);
  EXPECT_NE(snap.help.find("--format prometheus|json=prometheus"),
            std::string::npos);
  EXPECT_EQ(snap.help.find("--web.listen-address"), std::string::npos);
  // `pathwise help COMMAND` is `pathwise COMMAND --help`.
  EXPECT_EQ(Parse({"help", "snapshot"}).help, snap.help);
  EXPECT_EQ(Error({"help", "snapshto"}),
            "unknown command \"snapshto\": did you mean snapshot? (want "
            "serve, snapshot, topology, queues, top, lab or datapath; see "
            "'pathwise --help')");
  // Help wins over flags that are fine on their own.
  EXPECT_EQ(Parse({"topology", "--format=json", "-h"}).command, Command::kHelp);
}

TEST(CliParseTest, Version) {
  EXPECT_EQ(Parse({"--version"}).command, Command::kVersion);
  EXPECT_EQ(Parse({"version"}).command, Command::kVersion);
}

TEST(CliParseTest, LabTakesItsOwnFlags) {
  const Options o =
      Parse({"lab", "--scenario", "x.scn", "--policies=numa,pathwise",
             "--seed=7", "--format=csv", "--jobs=2"});
  EXPECT_EQ(o.command, Command::kLab);
  EXPECT_EQ(o.lab.scenario, "x.scn");
  EXPECT_EQ(o.lab.policies,
            (std::vector<policy::Policy>{policy::Policy::kNuma,
                                         policy::Policy::kPathwise}));
  EXPECT_EQ(o.lab.seed, 7u);
  EXPECT_EQ(o.lab.format, "csv");
  EXPECT_EQ(o.lab.jobs, 2);

  EXPECT_EQ(Error({"lab"}), "lab: --scenario FILE is required");
  EXPECT_EQ(Error({"lab", "--scenario=x", "--interval=1s"}),
            "lab: flag --interval does not apply to 'pathwise lab' (see "
            "'pathwise lab --help')");
  EXPECT_EQ(Error({"lab", "--scenario=x", "--polices=all"}),
            "lab: unknown flag --polices: did you mean --policies? (see "
            "'pathwise lab --help')");
  EXPECT_EQ(Error({"lab", "--scenario=x", "--policies=fastest"}),
            "lab: --policies: unknown policy 'fastest' (want numa, "
            "round-robin, queue-depth, latency, pathwise, hst or all)");
  EXPECT_EQ(Error({"lab", "--jobs"}), "lab: --jobs needs a value");

  const Options help = Parse({"lab", "--help"});
  EXPECT_EQ(help.command, Command::kHelp);
  EXPECT_NE(help.help.find("--scenario FILE"), std::string::npos);
  EXPECT_EQ(help.help.find("--web.listen-address"), std::string::npos);
}

// The HTTP server is built without IPv6: an IPv6 address is a usage error
// at parse time, not a bind failure at start.
TEST(CliParse, Ipv6ListenAddresses) {
  EXPECT_EQ(Parse({"--web.listen-address=[::1]:9877"}).listen_address,
            "[::1]:9877");
  EXPECT_EQ(Parse({"serve", "--web.listen-address", "[::]:1"}).listen_address,
            "[::]:1");
  EXPECT_EQ(
      Error({"--web.listen-address=::1:9877"}),
      "invalid value \"::1:9877\" for --web.listen-address: an IPv6 address "
      "needs brackets: [::1]:9877");
  EXPECT_EQ(Error({"--web.listen-address=[::g]:9877"}),
            "invalid value \"[::g]:9877\" for --web.listen-address: bad IPv6 "
            "address \"::g\"");
  EXPECT_EQ(Parse({"--web.listen-address=127.0.0.1:9000"}).listen_address,
            "127.0.0.1:9000");
}

TEST(CliParse, ConnectionLimits) {
  EXPECT_EQ(Parse({"--web.max-connections=4096"}).web_max_connections, 4096);
  EXPECT_EQ(Error({"--web.max-connections=0"}),
            "invalid value \"0\" for --web.max-connections: want 1 to 65536");
}

}  // namespace
}  // namespace pathwise::agent

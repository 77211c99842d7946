// SPDX-License-Identifier: Apache-2.0
// The `pathwise` command line parsed in-process: defaults per command, every
// validator's one-line message, flags that do not apply, help and version,
// and the lab subcommand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
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
      Parse({"--listen_address=127.0.0.1:9000", "--interval", "500ms",
             "--bpf_stats", "--web.max_connections_per_client=0"});
  EXPECT_EQ(o.command, Command::kServe);
  EXPECT_EQ(o.web_max_connections_per_client, 0);
  EXPECT_EQ(o.listen_address, "127.0.0.1:9000");
  EXPECT_EQ(o.interval, absl::Milliseconds(500));
  EXPECT_TRUE(o.bpf_stats);
}

TEST(CliParseTest, EveryFlagIsStored) {
  const Options o =
      Parse({"snapshot", "--duration=0s", "--format=json", "--interval=250ms",
             "--sysfs_root=/tmp/sys", "--bpf=required", "--bpf_stats=true",
             "--devices=all", "--ewma_shift=0", "--degraded_ratio=2.5",
             "--degraded_windows=4", "--idle_windows", "7",
             "--recover_windows=9", "--reseed_ratio=0", "--log_level=debug"});
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
  EXPECT_FALSE(Parse({"--bpf_stats=false"}).bpf_stats);
  EXPECT_TRUE(Parse({"--bpf_stats=false", "--bpf_stats"}).bpf_stats);
  EXPECT_EQ(Parse({"--interval=1s", "--interval=3s"}).interval,
            absl::Seconds(3));
}

TEST(CliParseTest, ParsesDoNotShareState) {
  EXPECT_EQ(Parse({"--interval=5s", "--ewma_shift=1"}).interval,
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
      {{"--bpf_stats=maybe"},
       "invalid value \"maybe\" for --bpf_stats: want true or false"},
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
      {{"--log_level=loud"},
       "invalid value \"loud\" for --log_level: want debug, info, warn or "
       "error"},
      {{"--web.max_connections_per_client=-1"},
       "invalid value \"-1\" for --web.max_connections_per_client: want 0 "
       "(no limit) to 1024"},
      {{"--ewma_shift=17"},
       "invalid value \"17\" for --ewma_shift: want 0 to 16"},
      {{"--ewma_shift=-1"},
       "invalid value \"-1\" for --ewma_shift: want 0 to 16"},
      {{"snapshot", "--ewma_shift=x"},
       "invalid value \"x\" for --ewma_shift: want an integer"},
      {{"--degraded_ratio=1"},
       "invalid value \"1\" for --degraded_ratio: must be a number above 1"},
      {{"--degraded_ratio=nan"},
       "invalid value \"nan\" for --degraded_ratio: must be a number above 1"},
      {{"--degraded_ratio=inf"},
       "invalid value \"inf\" for --degraded_ratio: must be a number above 1"},
      {{"--degraded_ratio=x"},
       "invalid value \"x\" for --degraded_ratio: want a number"},
      {{"--degraded_windows=0"},
       "invalid value \"0\" for --degraded_windows: must be >= 1"},
      {{"snapshot", "--idle_windows=-3"},
       "invalid value \"-3\" for --idle_windows: must be >= 1"},
      {{"--recover_windows=0"},
       "invalid value \"0\" for --recover_windows: must be >= 1"},
      {{"--reseed_ratio=0.5"},
       "invalid value \"0.5\" for --reseed_ratio: want 0 (off) or above 1"},
      {{"topology", "--sysfs_root", ""},
       "invalid value \"\" for --sysfs_root: must not be empty"},
      {{"--listen_address"}, "flag --listen_address needs a value"},
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
    EXPECT_EQ(Parse({absl::StrCat("--listen_address=", good)}).listen_address,
              good);
  }
  for (const std::string bad :
       {"abc", "9877", ":99999", ":-1", ":port", "127.0.0.1:", "::1:9877",
        "999.1.1.1:9877", "1.2.3:9877", "a b:9877", "-host:9877", "[zz]:9877",
        "[:9877", "[1.2.3.4:9877"}) {
    const std::string message = Error({"serve", "--listen_address", bad});
    const std::string prefix =
        absl::StrCat("invalid value \"", bad, "\" for --listen_address: ");
    EXPECT_EQ(message.substr(0, prefix.size()), prefix) << message;
    EXPECT_GT(message.size(), prefix.size()) << message;  // says what is wrong
    // The reason is not the value named twice.
    EXPECT_EQ(message.find("invalid --listen_address"), std::string::npos)
        << message;
  }
  EXPECT_EQ(Error({"--listen_address=:99999"}),
            "invalid value \":99999\" for --listen_address: bad port "
            "\"99999\"");
  // A lenient reading (sscanf) would listen on 231.1.1.1.
  EXPECT_EQ(Error({"--listen_address=999.1.1.1:9877"}),
            "invalid value \"999.1.1.1:9877\" for --listen_address: bad IPv4 "
            "address \"999.1.1.1\" (want four numbers 0..255)");
}

TEST(CliParseTest, FlagOfAnotherCommandDoesNotApply) {
  EXPECT_EQ(Error({"topology", "--listen_address=:1"}),
            "flag --listen_address does not apply to 'pathwise topology'");
  EXPECT_EQ(Error({"topology", "--duration=1s"}),
            "flag --duration does not apply to 'pathwise topology'");
  EXPECT_EQ(Error({"topology", "--ewma_shift", "2"}),
            "flag --ewma_shift does not apply to 'pathwise topology'");
  EXPECT_EQ(Error({"serve", "--format=json"}),
            "flag --format does not apply to 'pathwise serve'");
  EXPECT_EQ(Error({"--duration=1s"}),
            "flag --duration does not apply to 'pathwise serve'");
  EXPECT_EQ(Error({"snapshot", "--scenario=x.scn"}),
            "flag --scenario does not apply to 'pathwise snapshot'");
}

TEST(CliParseTest, UnknownFlagsCommandsAndArguments) {
  EXPECT_EQ(Error({"--bogus"}), "unknown flag --bogus (see pathwise --help)");
  EXPECT_EQ(Error({"snapshot", "--bogus=1"}),
            "unknown flag --bogus (see pathwise --help)");
  EXPECT_EQ(Error({"-x"}), "unknown flag -x (see pathwise --help)");
  EXPECT_EQ(Error({"frobnicate"}),
            "unknown command \"frobnicate\": want serve, snapshot, topology, "
            "queues, top, lab or datapath (see pathwise --help)");
  EXPECT_EQ(Error({"snapshot", "extra"}),
            "unexpected argument \"extra\" (see pathwise --help)");
  EXPECT_EQ(Error({"--interval=1s", "snapshot"}),
            "unexpected argument \"snapshot\" (see pathwise --help)");
  EXPECT_EQ(Error({"serve", "topology"}),
            "unexpected argument \"topology\" (see pathwise --help)");
}

TEST(CliParseTest, HelpOfTheBinaryAndOfACommand) {
  for (const Args& args : {Args{"--help"}, Args{"-h"}, Args{"help"}}) {
    const Options o = Parse(args);
    EXPECT_EQ(o.command, Command::kHelp);
    EXPECT_EQ(o.help, HelpText());
  }
  const std::string full = HelpText();
  for (const char* want :
       {"pathwise serve", "pathwise snapshot", "pathwise topology", "lab",
        "--listen_address [HOST]:PORT=:9877", "--interval DURATION=1s",
        "--duration DURATION=2s", "--format prometheus|json=prometheus",
        "--format text|json=text", "--bpf auto|required|off=auto",
        "--sysfs_root DIR=/sys", "--reseed_ratio RATIO=3", "Exit status"}) {
    EXPECT_NE(full.find(want), std::string::npos) << want;
  }
  const Options snap = Parse({"snapshot", "--help"});
  EXPECT_EQ(snap.command, Command::kHelp);
  EXPECT_NE(snap.help.find("--duration"), std::string::npos);
  EXPECT_EQ(snap.help.find("--listen_address"), std::string::npos);
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
            "lab: unknown flag --interval");
  EXPECT_EQ(Error({"lab", "--scenario=x", "--policies=fastest"}),
            "lab: --policies: unknown policy 'fastest' (want numa, "
            "round-robin, queue-depth, latency, pathwise, hst or all)");
  EXPECT_EQ(Error({"lab", "--jobs"}), "lab: --jobs needs a value");

  const Options help = Parse({"lab", "--help"});
  EXPECT_EQ(help.command, Command::kHelp);
  EXPECT_NE(help.help.find("--scenario FILE"), std::string::npos);
  EXPECT_EQ(help.help.find("--listen_address"), std::string::npos);
}

// The HTTP server is built without IPv6: an IPv6 address is a usage error
// at parse time, not a bind failure at start.
TEST(CliParse, Ipv6ListenAddresses) {
  EXPECT_EQ(Parse({"--listen_address=[::1]:9877"}).listen_address,
            "[::1]:9877");
  EXPECT_EQ(Parse({"serve", "--listen_address", "[::]:1"}).listen_address,
            "[::]:1");
  EXPECT_EQ(Error({"--listen_address=::1:9877"}),
            "invalid value \"::1:9877\" for --listen_address: an IPv6 address "
            "needs brackets: [::1]:9877");
  EXPECT_EQ(Error({"--listen_address=[::g]:9877"}),
            "invalid value \"[::g]:9877\" for --listen_address: bad IPv6 "
            "address \"::g\"");
  EXPECT_EQ(Parse({"--listen_address=127.0.0.1:9000"}).listen_address,
            "127.0.0.1:9000");
}

TEST(CliParse, ConnectionLimits) {
  EXPECT_EQ(Parse({"--web.max_connections=4096"}).web_max_connections, 4096);
  EXPECT_EQ(Error({"--web.max_connections=0"}),
            "invalid value \"0\" for --web.max_connections: want 1 to 65536");
}

}  // namespace
}  // namespace pathwise::agent

// SPDX-License-Identifier: Apache-2.0
// Unit tests of `pathwise lab`: the scenario parser, determinism, faults.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "lab/lab_cli.h"
#include "lab/report.h"
#include "lab/scenario.h"
#include "lab/sim.h"
#include "lab/trace.h"

namespace pathwise::lab {
namespace {

constexpr char kSmall[] = R"(# a small scenario
[scenario]
name = small
duration = 5s
[workload]
numjobs = 4
iodepth = 8
bs = 4k
read = 70%
[path a]
latency = 200us
spread = 50us
parallelism = 16
service = 1ms
[path b]   # a second path
latency = 200us
parallelism = 16
service = 1ms
bandwidth = 100MiB/s
[events]
1s b delay 10ms
2s b loss 2%
3s b loss 0%
3s b delay 0ms
)";

TEST(ScenarioTest, ParsesValuesAndUnits) {
  EXPECT_EQ(*ParseDuration("30ms"), 30'000'000);
  EXPECT_EQ(*ParseDuration("1.5s"), 1'500'000'000);
  EXPECT_EQ(*ParseDuration("100us"), 100'000);
  EXPECT_EQ(*ParseDuration("2m"), 120'000'000'000);
  EXPECT_EQ(*ParseSize("4k"), 4096u);
  EXPECT_EQ(*ParseSize("4KiB"), 4096u);
  EXPECT_EQ(*ParseSize("512"), 512u);
  EXPECT_DOUBLE_EQ(*ParseBandwidth("1Gbit/s"), 125e6);
  EXPECT_DOUBLE_EQ(*ParseBandwidth("100MiB/s"), 100 * 1048576.0);
  EXPECT_DOUBLE_EQ(*ParseFraction("5%"), 0.05);
  EXPECT_DOUBLE_EQ(*ParseFraction("0.25"), 0.25);
  EXPECT_FALSE(ParseDuration("30").ok());
  EXPECT_FALSE(ParseDuration("-1s").ok());
  EXPECT_FALSE(ParseFraction("120%").ok());
  EXPECT_FALSE(ParseBandwidth("5 furlongs").ok());
}

TEST(ScenarioTest, ParsesAFile) {
  absl::StatusOr<Scenario> sc = ParseScenario(kSmall, "small.scn");
  ASSERT_TRUE(sc.ok()) << sc.status();
  EXPECT_EQ(sc->name, "small");
  EXPECT_EQ(sc->duration_ns, 5 * kSec);
  EXPECT_EQ(sc->workload.numjobs, 4);
  EXPECT_DOUBLE_EQ(sc->workload.read_fraction, 0.7);
  ASSERT_EQ(sc->paths.size(), 2u);
  EXPECT_EQ(sc->paths[1].name, "b");
  EXPECT_EQ(sc->paths[1].service_ns, 1 * kMs);
  ASSERT_EQ(sc->events.size(), 4u);
  EXPECT_EQ(sc->events[0].path, 1);
  EXPECT_EQ(sc->events[0].kind, EventKind::kDelay);
  EXPECT_EQ(sc->events[0].delay_ns, 10 * kMs);
  EXPECT_DOUBLE_EQ(sc->events[1].loss, 0.02);
}

void ExpectError(const std::string& text, const std::string& want) {
  absl::StatusOr<Scenario> sc = ParseScenario(text, "x.scn");
  ASSERT_FALSE(sc.ok()) << text;
  EXPECT_EQ(sc.status().message().substr(0, want.size()), want)
      << sc.status().message();
}

TEST(ScenarioTest, ErrorsSayFileLineAndWhat) {
  ExpectError("[path a]\nlatency = 3 parsecs\n", "x.scn:2: latency: bad");
  ExpectError("[path a]\n\nfoo = 1\n", "x.scn:3: unknown key 'foo' in [path]");
  ExpectError("[wat]\n", "x.scn:1: unknown section");
  ExpectError("latency = 1ms\n", "x.scn:1: entry before any [section]");
  ExpectError("[scenario]\nname = x\n", "x.scn:2: no [path NAME] section");
  ExpectError("[path a]\n[events]\n1s b down\n",
              "x.scn:3: event names unknown path 'b'");
  ExpectError("[path a]\n[events]\n1s a explode\n",
              "x.scn:3: unknown event 'explode'");
  ExpectError("[path a]\n[events]\n1s a loss 100%\n", "x.scn:3: bad loss");
  ExpectError("[path a]\n[path a]\n", "x.scn:2: path 'a' defined twice");
  ExpectError("[path a]\nana = sideways\n", "x.scn:2: ana: bad ANA state");
  ExpectError(
      "[tcp]\ncongestion = vegas\n[path a]\n",
      "x.scn:2: congestion: bad congestion control (cubic or reno) 'vegas'");
  ExpectError("[tcp]\ntlp = yes\n[path a]\n",
              "x.scn:2: tlp: bad tail loss probe (on or off) 'yes'");
  ExpectError("[tcp]\nwindow = 512\n[path a]\n",
              "x.scn:2: window: bad window (1k to 1024M) '512'");
  ExpectError("[tcp]\nwindow = 2048M\n[path a]\n",
              "x.scn:2: window: bad window (1k to 1024M) '2048M'");
  ExpectError("[tcp]\nwindow = wide\n[path a]\n",
              "x.scn:2: window: bad size (want e.g. 4k, 4KiB, 4096) 'wide'");
}

// Linux's default congestion control unless the scenario names Reno.
TEST(ScenarioTest, CongestionIsCubicUnlessReno) {
  absl::StatusOr<Scenario> cubic = ParseScenario("[path a]\n", "x.scn");
  ASSERT_TRUE(cubic.ok()) << cubic.status();
  EXPECT_EQ(cubic->tcp.congestion, TcpModel::Congestion::kCubic);
  absl::StatusOr<Scenario> reno =
      ParseScenario("[tcp]\ncongestion = reno\n[path a]\n", "x.scn");
  ASSERT_TRUE(reno.ok()) << reno.status();
  EXPECT_EQ(reno->tcp.congestion, TcpModel::Congestion::kReno);
}

// Linux's tail loss probe unless the scenario turns it off.
TEST(ScenarioTest, TailLossProbeUnlessOff) {
  absl::StatusOr<Scenario> on = ParseScenario("[path a]\n", "x.scn");
  ASSERT_TRUE(on.ok()) << on.status();
  EXPECT_TRUE(on->tcp.tlp);
  absl::StatusOr<Scenario> off =
      ParseScenario("[tcp]\ntlp = off\n[path a]\n", "x.scn");
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_FALSE(off->tcp.tlp);
}

// The receiver's window: Linux's default (half of tcp_rmem's 6 MiB) unless
// the scenario sets one.
TEST(ScenarioTest, ReceiversWindowIsThreeMiBUnlessSet) {
  absl::StatusOr<Scenario> dflt = ParseScenario("[path a]\n", "x.scn");
  ASSERT_TRUE(dflt.ok()) << dflt.status();
  EXPECT_EQ(dflt->tcp.window_bytes, 3 << 20);
  absl::StatusOr<Scenario> set =
      ParseScenario("[tcp]\nwindow = 16MiB\n[path a]\n", "x.scn");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->tcp.window_bytes, 16 << 20);
}

// A latency-bound path whose connection the receiver's window limits
// serves a window per round trip, whatever the I/O waiting for it: one
// connection, a 10 ms round trip, 1 MiB of window (724 segments of 1448)
// and I/Os of 64 KiB (48 segments with command and completion) move
// 724 / 48 I/Os per round trip, 94.3 MiB/s; four times the window, four
// times that (the queue holds 256 I/Os, more than four windows' worth).
TEST(SimTest, TheReceiversWindowBoundsAPathsThroughput) {
  auto run = [](const std::string& window) {
    const std::string text =
        "[scenario]\nduration = 20s\n"
        "[workload]\nnumjobs = 4\niodepth = 64\n"
        "bs = 64k\nread = 0\ncpus = 1\n"
        "[tcp]\nwindow = " +
        window + "\n[path a]\nlatency = 10ms\nqueues = 1\n";
    absl::StatusOr<Scenario> sc = ParseScenario(text, "w.scn");
    EXPECT_TRUE(sc.ok()) << sc.status();
    return Simulate(*sc, policy::Policy::kRoundRobin, 1).ops[1].mib_s;
  };
  const double one = run("1M");
  EXPECT_NEAR(one, 1048576.0 / 1448 / 48 * 65536 / 0.010 / 1048576, 1.5);
  const double four = run("4M");
  EXPECT_NEAR(four / one, 4, 0.1);
}

TEST(SimTest, DeterministicForASeed) {
  absl::StatusOr<Scenario> sc = ParseScenario(kSmall, "small.scn");
  ASSERT_TRUE(sc.ok());
  const std::vector<policy::Policy> all = policy::AllPolicies();
  const std::string a = FormatCsv(*sc, 7, RunPolicies(*sc, all, 7, 1));
  const std::string b = FormatCsv(*sc, 7, RunPolicies(*sc, all, 7, 2));
  EXPECT_EQ(a, b);  // same seed, same output, whatever the thread count
  const std::string c = FormatCsv(*sc, 8, RunPolicies(*sc, all, 8, 2));
  EXPECT_NE(a, c);
  const std::string j1 = FormatJson(*sc, 7, RunPolicies(*sc, all, 7, 2));
  const std::string j2 = FormatJson(*sc, 7, RunPolicies(*sc, all, 7, 1));
  EXPECT_EQ(j1, j2);
}

TEST(SimTest, ReadWriteMixAndThroughputAccounting) {
  absl::StatusOr<Scenario> sc = ParseScenario(kSmall, "small.scn");
  ASSERT_TRUE(sc.ok());
  const PolicyResult r = Simulate(*sc, policy::Policy::kRoundRobin, 1);
  const double reads = static_cast<double>(r.ops[0].ios);
  const double writes = static_cast<double>(r.ops[1].ios);
  EXPECT_NEAR(reads / (reads + writes), 0.7, 0.02);
  EXPECT_DOUBLE_EQ(r.ops[0].mib_s, reads * 4096 / 5 / 1048576);
  EXPECT_GT(r.ops[0].p99_ms, r.ops[0].p50_ms);
}

constexpr char kFaults[] = R"(
[scenario]
name = faults
duration = 6s
[workload]
numjobs = 2
iodepth = 16
[path a]
latency = 100us
parallelism = 8
service = 500us
[path b]
latency = 100us
parallelism = 8
service = 500us
[events]
1s a down
2s a up
3s a ana inaccessible
4s a ana optimized
4s b down
)";

TEST(SimTest, DownFailsOverAndNoPathParksIo) {
  absl::StatusOr<Scenario> sc = ParseScenario(kFaults, "faults.scn");
  ASSERT_TRUE(sc.ok()) << sc.status();
  for (policy::Policy p : policy::AllPolicies()) {
    const PolicyResult r = Simulate(*sc, p, 1);
    // I/O keeps completing through every phase on both paths.
    EXPECT_GT(r.path_ios[0], 0u) << policy::PolicyName(p);
    EXPECT_GT(r.path_ios[1], 0u) << policy::PolicyName(p);
    if (p == policy::Policy::kNuma) {
      // numa sits on a (first in list order) except while it is down or
      // inaccessible: 3 of 6 seconds.
      EXPECT_GT(r.path_ios[0], r.path_ios[1]);
    }
    EXPECT_GT(r.failovers, 0u) << policy::PolicyName(p);
  }
  // With every path down, I/O waits (parked) and resumes when one returns.
  const std::string all_down = std::string(kFaults) + "5s a down\n5.5s b up\n";
  absl::StatusOr<Scenario> sc2 = ParseScenario(all_down, "down.scn");
  ASSERT_TRUE(sc2.ok()) << sc2.status();
  const PolicyResult r1 = Simulate(*sc, policy::Policy::kQueueDepth, 1);
  const PolicyResult r2 = Simulate(*sc2, policy::Policy::kQueueDepth, 1);
  // 0.5 of 6 s without a path: about 1/12 fewer I/Os, not none.
  const double ratio = static_cast<double>(r2.ops[0].ios) / r1.ops[0].ios;
  EXPECT_LT(ratio, 0.95);
  EXPECT_GT(ratio, 0.85);
}

// --trace's rows are the run's completions: as many per policy and op as
// the result counts, each with its latency the difference of its times,
// on a path of the scenario, failed over where a path went down.
TEST(TraceTest, RowsAreTheRunsCompletions) {
  absl::StatusOr<Scenario> sc = ParseScenario(kFaults, "faults.scn");
  ASSERT_TRUE(sc.ok()) << sc.status();
  const std::vector<policy::Policy> policies = {policy::Policy::kNuma,
                                                policy::Policy::kPathwise};
  TraceRecorder trace(policies, 1'000'000);
  const std::vector<PolicyResult> results =
      RunPolicies(*sc, policies, 1, 2, &trace);
  EXPECT_EQ(trace.dropped(), 0u);
  const std::vector<std::string> lines =
      absl::StrSplit(trace.Csv(*sc), '\n', absl::SkipEmpty());
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0],
            "policy,op,path,submit_s,path_submit_s,complete_s,latency_ms,"
            "path_latency_ms,failovers");
  std::map<std::string, uint64_t> rows, failed_over;
  std::map<std::string, double> last;
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::vector<std::string> f = absl::StrSplit(lines[i], ',');
    ASSERT_EQ(f.size(), 9u) << lines[i];
    double submit, path_submit, complete, lat, path_lat;
    int failovers;
    ASSERT_TRUE(
        absl::SimpleAtod(f[3], &submit) &&
        absl::SimpleAtod(f[4], &path_submit) &&
        absl::SimpleAtod(f[5], &complete) && absl::SimpleAtod(f[6], &lat) &&
        absl::SimpleAtod(f[7], &path_lat) && absl::SimpleAtoi(f[8], &failovers))
        << lines[i];
    EXPECT_TRUE(f[2] == "a" || f[2] == "b") << lines[i];
    EXPECT_LE(submit, path_submit) << lines[i];
    EXPECT_LT(path_submit, complete) << lines[i];
    EXPECT_NEAR(lat, (complete - submit) * 1e3, 1e-5) << lines[i];
    EXPECT_NEAR(path_lat, (complete - path_submit) * 1e3, 1e-5) << lines[i];
    // In simulated-time order within a policy.
    EXPECT_GE(complete, last[f[0]]) << lines[i];
    last[f[0]] = complete;
    ++rows[f[0] + "/" + f[1]];
    if (failovers > 0) ++failed_over[f[0]];
  }
  for (size_t i = 0; i < policies.size(); ++i) {
    const std::string name(policy::PolicyName(policies[i]));
    EXPECT_EQ(rows[name + "/read"], results[i].ops[0].ios) << name;
    EXPECT_EQ(rows[name + "/write"], results[i].ops[1].ios) << name;
    // Every failover shows in a row, unless the I/O failed over twice.
    EXPECT_GT(failed_over[name], 0u) << name;
    EXPECT_LE(failed_over[name], results[i].failovers) << name;
  }
  // A bound keeps the first rows and counts the rest.
  TraceRecorder small(policies, 10);
  RunPolicies(*sc, policies, 1, 1, &small);
  EXPECT_EQ(small.dropped(), results[0].ops[0].ios + results[0].ops[1].ios +
                                 results[1].ops[0].ios + results[1].ops[1].ios -
                                 20);
  const std::vector<std::string> kept =
      absl::StrSplit(small.Csv(*sc), '\n', absl::SkipEmpty());
  EXPECT_EQ(kept.size(), 21u);
}

TEST(LabCliTest, TraceWritesTheFileAndIsOnlyForAScenario) {
  const std::string scn = ::testing::TempDir() + "/trace_faults.scn";
  const std::string csv = ::testing::TempDir() + "/trace.csv";
  {
    std::ofstream f(scn);
    f << kFaults;
  }
  std::ostringstream out, err;
  EXPECT_EQ(
      RunLabCommandLine(
          {"--scenario", scn, "--policies", "numa", "--trace", csv}, out, err),
      0)
      << err.str();
  std::ifstream f(csv);
  std::string header;
  std::getline(f, header);
  EXPECT_EQ(header.substr(0, 10), "policy,op,");
  std::string row;
  ASSERT_TRUE(std::getline(f, row));
  EXPECT_EQ(row.substr(0, 5), "numa,");
  err.str("");
  EXPECT_EQ(RunLabCommandLine({"--league", "2", "--trace", csv}, out, err), 2);
  EXPECT_EQ(err.str(), "pathwise: lab: --trace is for a --scenario run\n");
  err.str("");
  EXPECT_EQ(RunLabCommandLine({"--scenario", scn, "--trace", "/nonexistent/x"},
                              out, err),
            1);
  EXPECT_EQ(err.str(), "pathwise: lab: cannot write /nonexistent/x\n");
  std::remove(scn.c_str());
  std::remove(csv.c_str());
}

TEST(LabCliTest, BadFlagsAreOneLineAndExit2) {
  std::ostringstream out, err;
  EXPECT_EQ(RunLabCommandLine({}, out, err), 2);
  EXPECT_EQ(err.str(), "pathwise: lab: --scenario FILE is required\n");
  err.str("");
  EXPECT_EQ(
      RunLabCommandLine({"--scenario", "x", "--policies", "fastest"}, out, err),
      2);
  EXPECT_NE(err.str().find("unknown policy 'fastest'"), std::string::npos);
  err.str("");
  EXPECT_EQ(RunLabCommandLine({"--scenario=x", "--format=xml"}, out, err), 2);
  err.str("");
  EXPECT_EQ(RunLabCommandLine({"--scenario=x", "--bogus=1"}, out, err), 2);
  EXPECT_EQ(err.str(), "pathwise: lab: unknown flag --bogus\n");
  err.str("");
  EXPECT_EQ(RunLabCommandLine({"--scenario=/nonexistent.scn"}, out, err), 1);
  EXPECT_EQ(err.str(), "pathwise: lab: /nonexistent.scn: cannot open\n");
  EXPECT_EQ(RunLabCommandLine({"--help"}, out, err), 0);
  EXPECT_NE(out.str().find("--scenario FILE"), std::string::npos);
}

}  // namespace
}  // namespace pathwise::lab

// SPDX-License-Identifier: Apache-2.0
// Scenario files the simulator cannot run are parse errors that say why
// (time that cannot advance, sizes beyond the stated limits, rto_max below
// rto_min, a block size of 0); names that are awkward for the outputs
// (commas and quotes in CSV, bytes that are not UTF-8 in JSON) come out
// well formed; a directory as --scenario is named as such.
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lab/lab_cli.h"
#include "lab/report.h"
#include "lab/scenario.h"
#include "lab/sim.h"
#include "nlohmann/json.hpp"

namespace pathwise::lab {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string Error(const std::string& text) {
  absl::StatusOr<Scenario> sc = ParseScenario(text, "x.scn");
  if (sc.ok()) return "(parsed)";
  return std::string(sc.status().message());
}

// Round-robin over the scenario `text`, which must parse.
PolicyResult RoundRobin(const std::string& text) {
  absl::StatusOr<Scenario> sc = ParseScenario(text, "x.scn");
  EXPECT_TRUE(sc.ok()) << sc.status();
  if (!sc.ok()) return {};
  return Simulate(*sc, policy::Policy::kRoundRobin, 1);
}

TEST(HostileScenarioTest, PathThatTakesNoTimeIsRejected) {
  EXPECT_EQ(
      Error("[scenario]\nduration = 1s\n[path a]\nlatency = 100us\n"
            "[path b]\nlatency = 0ns\n"),
      "x.scn:5: path 'b' takes no time: latency, service and spread "
      "are 0 and its read bandwidth is unlimited, so simulated time would "
      "stop (give it a latency)");
  // Any one of them makes time advance.
  for (const char* key : {"latency = 1ns", "service = 1us", "spread = 10us",
                          "bandwidth = 1GB/s"}) {
    const std::string text = absl::StrCat(
        "[scenario]\nduration = 100us\n[path a]\nlatency = 0s\n", key, "\n");
    absl::StatusOr<Scenario> sc = ParseScenario(text, "x.scn");
    ASSERT_TRUE(sc.ok()) << key << ": " << sc.status();
    // And the run ends: simulated time reaches the duration.
    const PolicyResult r = Simulate(*sc, policy::Policy::kRoundRobin, 1);
    EXPECT_GT(r.ops[0].ios, 0u) << key;
  }
}

// A link limited in one direction moves only that direction's time: a
// path whose reads are shaped and whose writes take nothing stops for
// writes, and is rejected as one.
TEST(HostileScenarioTest, OneDirectionLinkDoesNotMoveTheOther) {
  EXPECT_EQ(Error("[path a]\nlatency = 0s\nread_bandwidth = 1MB/s\n"),
            "x.scn:1: path 'a' takes no time for a write: latency, "
            "write_service and spread are 0 and its write bandwidth is "
            "unlimited, so simulated time would stop (give it a latency)");
  EXPECT_EQ(Error("[path a]\nlatency = 0s\nbandwidth = 1MB/s\n"
                  "read_bandwidth = 0B/s\n"),
            "x.scn:1: path 'a' takes no time: latency, service and spread "
            "are 0 and its read bandwidth is unlimited, so simulated time "
            "would stop (give it a latency)");
  EXPECT_EQ(Error("[path a]\nlatency = 0s\nread_bandwidth = 1MB/s\n"
                  "write_bandwidth = 2MB/s\n"),
            "(parsed)");
  EXPECT_EQ(Error("[path a]\nread_bandwidth = fast\n"),
            "x.scn:2: read_bandwidth: bad bandwidth (want e.g. 117MiB/s, "
            "1Gbit/s) 'fast'");
}

TEST(HostileScenarioTest, PathWhoseWritesTakeNoTimeIsRejected) {
  EXPECT_EQ(Error("[scenario]\nduration = 1s\n[path a]\nlatency = 0s\n"
                  "service = 1ms\nwrite_service = 0s\n"),
            "x.scn:3: path 'a' takes no time for a write: latency, "
            "write_service and spread are 0 and its write bandwidth is "
            "unlimited, so simulated time would stop (give it a latency)");
  EXPECT_EQ(
      Error("[path a]\nlatency = 0s\nservice = 0s\n"
            "write_service = 1ms\n"),
      "x.scn:1: path 'a' takes no time: latency, service and spread "
      "are 0 and its read bandwidth is unlimited, so simulated time would "
      "stop (give it a latency)");
  EXPECT_EQ(Error("[path a]\nwrite_service = 3 parsecs\n"),
            "x.scn:2: write_service: bad duration unit (want ns, us, ms, s "
            "or m) '3 parsecs'");
}

// A write's own service time is what a write costs at the target, and a
// read's is unchanged by it.
TEST(HostileScenarioTest, WriteServiceCostsWritesOnly) {
  auto run = [](const char* write_service, const char* read_share) {
    return RoundRobin(
        absl::StrCat("[scenario]\nduration = 1s\n[workload]\nnumjobs = 1\n"
                     "iodepth = 1\nread = ",
                     read_share,
                     "\n[path a]\nlatency = 0s\nparallelism = 1\n"
                     "service = 1ms\n",
                     write_service, "\n"));
  };
  // One I/O at a time: IOPS is 1 / the service time.
  EXPECT_NEAR(run("", "0%").ops[1].iops, 1000, 2);
  EXPECT_NEAR(run("write_service = 4ms", "0%").ops[1].iops, 250, 1);
  EXPECT_NEAR(run("write_service = 4ms", "100%").ops[0].iops, 1000, 2);
  EXPECT_NEAR(run("write_service = 250us", "0%").ops[1].p50_ms, 0.25, 0.01);
}

// A link's rate per direction: read data crosses target->host, write data
// host->target, each at its own rate where one is given.
TEST(HostileScenarioTest, OneDirectionBandwidthLimitsItsOpOnly) {
  auto run = [](const char* link, const char* read_share) {
    return RoundRobin(
        absl::StrCat("[scenario]\nduration = 1s\n[workload]\nnumjobs = 4\n"
                     "iodepth = 8\nbs = 4k\nread = ",
                     read_share, "\n[path a]\nlatency = 100us\n", link, "\n"));
  };
  auto read_iops = [&](const char* link) {
    return run(link, "100%").ops[0].iops;
  };
  auto write_iops = [&](const char* link) {
    return run(link, "0%").ops[1].iops;
  };
  // 4096 B at 4096000 B/s: 1 ms each on the link, 1000 IOPS; an unlimited
  // direction serves 32 outstanding over 100 us, far more.
  const char* both = "bandwidth = 4096000B/s";
  EXPECT_NEAR(read_iops(both), 1000, 10);
  EXPECT_NEAR(write_iops(both), 1000, 10);
  const char* reads = "read_bandwidth = 4096000B/s";
  EXPECT_NEAR(read_iops(reads), 1000, 10);
  EXPECT_GT(write_iops(reads), 50'000);
  const char* writes = "bandwidth = 4096000B/s\nread_bandwidth = 0B/s";
  EXPECT_GT(read_iops(writes), 50'000);
  EXPECT_NEAR(write_iops(writes), 1000, 10);
  const char* two = "read_bandwidth = 4096000B/s\nwrite_bandwidth = 8192000B/s";
  EXPECT_NEAR(read_iops(two), 1000, 10);
  EXPECT_NEAR(write_iops(two), 2000, 20);
  // Mixed, reads shaped: a write's data passes, but its completion comes
  // back target->host on its connection behind the reads' data (TCP
  // delivers in order, as NVMe/TCP's response capsule follows the read
  // data queued before it), so it waits about as long as a read.
  const PolicyResult mixed = run(reads, "50%");
  EXPECT_GT(mixed.ops[0].p50_ms, 5.0);
  EXPECT_GT(mixed.ops[1].p50_ms, 0.5 * mixed.ops[0].p50_ms);
}

// The host's cost per I/O: `cpu_per_io` is CPU time, one I/O at a time per
// CPU, so it caps a CPU's IOPS however many I/Os are outstanding;
// `host_latency` is a delay that takes no CPU. Both count in the I/O's
// latency at the head.
TEST(HostileScenarioTest, HostCostsCapACpuAndDelayEachIo) {
  auto run = [](const char* host, int cpus) {
    return RoundRobin(
        absl::StrCat("[scenario]\nduration = 1s\n[workload]\nnumjobs = 4\n"
                     "iodepth = 8\ncpus = ",
                     cpus, "\n", host, "\n[path a]\nlatency = 1ms\n"));
  };
  // Free host: 32 outstanding over a 1 ms path, 32k IOPS (less the
  // congestion window's first round trips).
  EXPECT_NEAR(run("", 1).ops[0].iops, 32000, 300);
  // 100 us of CPU per I/O: one CPU serves 10k IOPS, two 20k.
  EXPECT_NEAR(run("cpu_per_io = 100us", 1).ops[0].iops, 10000, 20);
  EXPECT_NEAR(run("cpu_per_io = 100us", 2).ops[0].iops, 20000, 40);
  // 1 ms of delay per I/O, no CPU: half the rate, twice the latency.
  const PolicyResult d = run("host_latency = 1ms", 1);
  EXPECT_NEAR(d.ops[0].iops, 16000, 100);
  EXPECT_NEAR(d.ops[0].p50_ms, 2.0, 0.05);
}

TEST(HostileScenarioTest, SizesBeyondTheLimitsAreParseErrors) {
  EXPECT_EQ(Error("[workload]\nnumjobs = 4096\niodepth = 65536\n[path a]\n"),
            "x.scn:3: numjobs x iodepth = 268435456: at most 262144 "
            "outstanding I/Os");
  // The limit itself is allowed.
  EXPECT_EQ(Error("[workload]\niodepth = 1024\nnumjobs = 256\n[path a]\n"),
            "(parsed)");
  EXPECT_THAT(Error("[workload]\niodepth = 1024\nnumjobs = 257\n[path a]\n"),
              StartsWith("x.scn:3: numjobs x iodepth = 263168: at most"));
  EXPECT_EQ(Error("[path a]\nparallelism = 1048576\n[path b]\n"
                  "parallelism = 1\n"),
            "x.scn:3: parallelism summed over the paths is 1048577: at most "
            "1048576");
  std::string many;
  for (int i = 0; i <= kMaxPaths; ++i)
    absl::StrAppend(&many, "[path p", i, "]\n");
  EXPECT_EQ(Error(many),
            absl::StrCat("x.scn:", kMaxPaths + 1, ": more than 256 paths"));
}

TEST(HostileScenarioTest, LimitsAreReachableAndRun) {
  // At the limits the parse succeeds and a short run fits in memory (the
  // latency policy keeps the most state: per CPU, op group and path).
  std::string text =
      "[scenario]\nduration = 1ms\n[workload]\nnumjobs = 256\n"
      "iodepth = 1024\ncpus = 4096\n[path big]\nparallelism = 1048320\n"
      "latency = 1ms\n";
  for (int i = 1; i < kMaxPaths; ++i) {
    absl::StrAppend(&text, "[path p", i, "]\nparallelism = 1\n");
  }
  absl::StatusOr<Scenario> sc = ParseScenario(text, "x.scn");
  ASSERT_TRUE(sc.ok()) << sc.status();
  const PolicyResult r = Simulate(*sc, policy::Policy::kLatency, 1);
  EXPECT_EQ(r.path_ios.size(), static_cast<size_t>(kMaxPaths));
  EXPECT_GT(r.events, 0u);
}

TEST(HostileScenarioTest, BlockSizeThatRoundsToZeroIsRejected) {
  EXPECT_EQ(Error("[workload]\nbs = 0.4\n[path a]\n"),
            "x.scn:2: bs: bad size (rounds to 0 bytes) '0.4'");
  EXPECT_FALSE(ParseSize("0.49").ok());
  EXPECT_EQ(*ParseSize("0.5"), 1u);
  EXPECT_THAT(Error("[workload]\nbs = 99999999999999999999999M\n[path a]\n"),
              HasSubstr("bad size (too large)"));
}

TEST(HostileScenarioTest, RtoMaxBelowRtoMinIsRejected) {
  EXPECT_EQ(Error("[tcp]\nrto_min = 1s\nrto_max = 500ms\n[path a]\n"),
            "x.scn:3: rto_max (0.5s) is below rto_min (1s)");
  // Against the default rto_min (200 ms).
  EXPECT_EQ(Error("[path a]\n[tcp]\nrto_max = 100ms\n"),
            "x.scn:3: rto_max (0.1s) is below rto_min (0.2s)");
  EXPECT_EQ(Error("[tcp]\nrto_min = 1s\nrto_max = 1s\n[path a]\n"), "(parsed)");
}

// A one-path scenario named `name`, run under numa.
std::vector<PolicyResult> RunNamed(Scenario& sc, const std::string& name) {
  sc.name = name;
  return RunPolicies(sc, {policy::Policy::kNuma}, 1, 1);
}

Scenario Tiny(const std::string& path_name) {
  absl::StatusOr<Scenario> sc = ParseScenario(
      absl::StrCat("[scenario]\nduration = 10ms\n[path ", path_name, "]\n"),
      "x.scn");
  EXPECT_TRUE(sc.ok()) << sc.status();
  return *sc;
}

TEST(HostileScenarioTest, CsvQuotesNamesPerRfc4180) {
  Scenario sc = Tiny("a,\"b\"");
  const std::string csv = FormatCsv(sc, 1, RunNamed(sc, "one, \"two\""));
  std::istringstream lines(csv);
  std::string header, row;
  std::getline(lines, header);
  std::getline(lines, row);
  EXPECT_EQ(header,
            "scenario,seed,policy,op,mib_s,iops,p50_ms,p99_ms,p999_ms,"
            "failovers,\"share_a,\"\"b\"\"\"");
  EXPECT_THAT(row, StartsWith("\"one, \"\"two\"\"\",1,numa,read,"));
  // Plain names stay unquoted.
  Scenario plain = Tiny("p0");
  EXPECT_THAT(FormatCsv(plain, 1, RunNamed(plain, "small")),
              HasSubstr("\nsmall,1,numa,read,"));
}

TEST(HostileScenarioTest, JsonOfNamesThatAreNotUtf8IsValid) {
  Scenario sc = Tiny("p\xFF");
  sc.description = "raw \xC3";
  std::string text;
  ASSERT_NO_THROW(text = FormatJson(sc, 1, RunNamed(sc, "name \xFF\xFE")));
  const nlohmann::json j =
      nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(j.is_discarded()) << text;
  EXPECT_EQ(j["scenario"], "name \xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_TRUE(j["results"][0]["paths"].contains("p\xEF\xBF\xBD"));
}

TEST(HostileScenarioTest, DirectoryAsScenarioSaysSo) {
  const std::string dir = ::testing::TempDir();
  std::ostringstream out, err;
  EXPECT_EQ(RunLabCommandLine({"--scenario", dir}, out, err), 1);
  EXPECT_EQ(err.str(),
            absl::StrCat("pathwise: lab: ", dir, ": is a directory\n"));
  EXPECT_EQ(out.str(), "");
}

}  // namespace
}  // namespace pathwise::lab

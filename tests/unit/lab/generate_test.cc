// SPDX-License-Identifier: Apache-2.0
// The scenario generator: the same (seed, index) draws the same scenario,
// every drawn scenario is a valid .scn file that reads back to itself, the
// draws cover the documented ranges, drawn scenarios simulate, and
// `pathwise lab --generate` writes them.
#include "lab/generate.h"

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lab/lab_cli.h"
#include "lab/scenario.h"
#include "lab/sim.h"

namespace pathwise::lab {
namespace {

TEST(Generate, TheSameSeedAndIndexDrawTheSameScenario) {
  EXPECT_EQ(ScenarioText(DrawScenario(7, 3)), ScenarioText(DrawScenario(7, 3)));
  EXPECT_NE(ScenarioText(DrawScenario(7, 3)), ScenarioText(DrawScenario(7, 4)));
  EXPECT_NE(ScenarioText(DrawScenario(7, 3)), ScenarioText(DrawScenario(8, 3)));
  EXPECT_EQ(DrawScenario(7, 3).name, "gen-7-3");
}

// 300 draws: each parses, and its text is a fixed point (what the parser
// read is what was drawn), so a kept .scn file reproduces the case.
TEST(Generate, EveryDrawIsAScenarioFileThatReadsBackToItself) {
  for (int i = 0; i < 300; ++i) {
    const Scenario s = DrawScenario(1, i);
    const std::string text = ScenarioText(s);
    absl::StatusOr<Scenario> back = ParseScenario(text, s.name + ".scn");
    ASSERT_TRUE(back.ok()) << back.status() << "\n" << text;
    EXPECT_EQ(ScenarioText(*back), text) << s.name;
    EXPECT_EQ(back->paths.size(), s.paths.size());
    EXPECT_EQ(back->events.size(), s.events.size());
    EXPECT_EQ(back->workload.numjobs * back->workload.iodepth,
              s.workload.numjobs * s.workload.iodepth);
  }
}

// The family spans what lab/generate.h documents.
TEST(Generate, DrawsCoverTheDocumentedRanges) {
  std::set<size_t> paths;
  int64_t min_rtt = INT64_MAX, max_rtt = 0;
  int capacity = 0, latency_bound = 0, with_bandwidth = 0;
  int dearer_writes = 0, cheaper_writes = 0;
  std::set<EventKind> kinds;
  std::set<uint32_t> sizes;
  for (int i = 0; i < 300; ++i) {
    const Scenario s = DrawScenario(2, i);
    paths.insert(s.paths.size());
    for (const PathSpec& p : s.paths) {
      min_rtt = std::min(min_rtt, p.latency_ns);
      max_rtt = std::max(max_rtt, p.latency_ns);
      with_bandwidth += p.bandwidth > 0;
      if (p.write_service_ns >= 0) {
        dearer_writes += p.write_service_ns > p.service_ns;
        cheaper_writes += p.write_service_ns < p.service_ns;
        EXPECT_LE(p.write_service_ns, 4 * p.service_ns) << s.name;
        EXPECT_GE(p.write_service_ns, p.service_ns / 4 - 1) << s.name;
      }
    }
    (s.paths[0].parallelism > 0 ? capacity : latency_bound)++;
    for (const Event& e : s.events) kinds.insert(e.kind);
    sizes.insert(s.workload.bs);
    EXPECT_LE(s.workload.numjobs * s.workload.iodepth, 8192) << s.name;
    EXPECT_EQ(s.paths[0].ana, model::AnaState::kOptimized) << s.name;
    // At most one path is disturbed at any time: a down is followed by
    // its up before any other event starts.
    for (size_t k = 0; k + 1 < s.events.size(); ++k) {
      if (s.events[k].kind == EventKind::kDown) {
        EXPECT_EQ(s.events[k + 1].kind, EventKind::kUp) << s.name;
        EXPECT_EQ(s.events[k + 1].path, s.events[k].path) << s.name;
      }
    }
  }
  EXPECT_EQ(*paths.begin(), 2u);
  EXPECT_EQ(*paths.rbegin(), 8u);
  EXPECT_LT(min_rtt, 40'000);      // PCIe-like, under 40 us
  EXPECT_GT(max_rtt, 20'000'000);  // WAN-like, over 20 ms
  EXPECT_GT(capacity, 100);
  EXPECT_GT(latency_bound, 100);
  EXPECT_GT(with_bandwidth, 0);
  EXPECT_GT(dearer_writes, 100);  // asymmetric read/write costs both ways
  EXPECT_GT(cheaper_writes, 100);
  EXPECT_EQ(kinds.size(), 5u);  // delay, loss, down, up, ana
  EXPECT_EQ(sizes.size(), 7u);
}

// Drawn scenarios run in the simulator (shortened: this is about validity,
// not results) and complete I/O under every policy.
TEST(Generate, DrawnScenariosSimulate) {
  for (int i = 0; i < 3; ++i) {
    Scenario s = DrawScenario(3, i);
    s.duration_ns = 1 * kSec;
    s.events.clear();
    for (policy::Policy p :
         {policy::Policy::kRoundRobin, policy::Policy::kPathwise}) {
      const PolicyResult r = Simulate(s, p, s.seed);
      EXPECT_GT(r.ops[0].ios + r.ops[1].ios, 0u) << s.name;
    }
  }
}

}  // namespace
}  // namespace pathwise::lab

namespace pathwise::lab {
namespace {

// `pathwise lab --generate N --out DIR`: N files, named after their draw,
// each a scenario lab runs; the same seed writes the same files.
TEST(GenerateCommand, WritesTheDrawsAsScenarioFiles) {
  char tmpl[] = "/tmp/pathwise-generate-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = std::string(tmpl) + "/family";
  std::ostringstream out, err;
  ASSERT_EQ(
      RunLabCommandLine({"--generate=3", "--seed=9", "--out", dir}, out, err),
      0)
      << err.str();
  EXPECT_EQ(out.str(), dir + "/gen-9-0.scn\n" + dir + "/gen-9-1.scn\n" + dir +
                           "/gen-9-2.scn\n");
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<Scenario> s =
        LoadScenario(dir + "/gen-9-" + std::to_string(i) + ".scn");
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ(ScenarioText(*s), ScenarioText(DrawScenario(9, i)));
  }
  // A file where the directory should be: a clear error, exit 1.
  std::ostringstream out2, err2;
  EXPECT_EQ(RunLabCommandLine({"--generate=1", "--out", dir + "/gen-9-0.scn/x"},
                              out2, err2),
            1);
  EXPECT_NE(err2.str().find("pathwise: lab: --out "), std::string::npos)
      << err2.str();
  std::filesystem::remove_all(tmpl);
}

}  // namespace
}  // namespace pathwise::lab

// SPDX-License-Identifier: Apache-2.0
// `pathwise lab`'s answer to "which iopolicy should I set?": the verdict
// (lab/verdict.h) on hand-made results, and a small phased scenario run end
// to end: the verdict per phase and overall, the ×best column, and the
// --plot SVG parsed by xmllint with one series per policy.
#include "lab/verdict.h"

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lab/lab_cli.h"
#include "lab/league.h"
#include "lab/report.h"
#include "lab/timeline.h"

namespace pathwise::lab {
namespace {

using policy::Policy;
using ::testing::HasSubstr;

PolicyResult Result(Policy p, double read_mib_s, double write_mib_s = 0) {
  PolicyResult r;
  r.policy = p;
  r.ops[0].mib_s = read_mib_s;
  r.ops[0].ios = read_mib_s > 0 ? 1000 : 0;
  r.ops[1].mib_s = write_mib_s;
  r.ops[1].ios = write_mib_s > 0 ? 1000 : 0;
  r.path_ios = {1, 1};
  return r;
}

TEST(Verdict, NamesTheBestSettablePolicyAndItsRatios) {
  const std::vector<PolicyResult> results = {
      Result(Policy::kNuma, 100),
      Result(Policy::kRoundRobin, 120),
      Result(Policy::kQueueDepth, 200, 5.2),
      Result(Policy::kLatency, 300),
      Result(Policy::kPathwise, 250),
      Result(Policy::kHst, 180)};
  const Verdict v = Decide(results);
  ASSERT_TRUE(v.best_settable.has_value());
  EXPECT_EQ(*v.best_settable, 2u);
  EXPECT_EQ(*v.best_overall, 3u);
  EXPECT_EQ(VerdictLines(results, v),
            "best policy you can set: queue-depth (1.71× round-robin, 2.05× "
            "numa)\n"
            "best overall: latency, 1.46× queue-depth (a proposed kernel "
            "iopolicy, not merged)\n");
}

// Each non-settable policy, when it is the best of all, never becomes the
// policy to set.
TEST(Verdict, NeverRecommendsAPolicyTheKernelCannotSet) {
  for (Policy winner : {Policy::kLatency, Policy::kPathwise, Policy::kHst}) {
    std::vector<PolicyResult> results;
    for (Policy p : policy::AllPolicies()) {
      results.push_back(Result(p, p == winner ? 1000 : 10 + 10 * int(p)));
    }
    const Verdict v = Decide(results);
    ASSERT_TRUE(v.best_settable.has_value());
    EXPECT_TRUE(policy::IsKernelIopolicy(results[*v.best_settable].policy));
    EXPECT_EQ(results[*v.best_settable].policy, Policy::kQueueDepth);
    EXPECT_EQ(results[*v.best_overall].policy, winner);
    EXPECT_THAT(VerdictLines(results, v),
                HasSubstr("best policy you can set: queue-depth (1.50× "
                          "round-robin, 3.00× numa)\n"));
  }
}

TEST(Verdict, BestOverallSettableAndEdgeCases) {
  std::vector<PolicyResult> results = {Result(Policy::kRoundRobin, 100),
                                       Result(Policy::kQueueDepth, 100),
                                       Result(Policy::kPathwise, 90)};
  // A tie goes to the first in the run's order.
  EXPECT_EQ(VerdictLines(results, Decide(results)),
            "best policy you can set: round-robin (1.00× queue-depth)\n"
            "best overall: round-robin, the best you can set\n");
  // Within 1 %: the settable policy is as good.
  results = {Result(Policy::kQueueDepth, 100),
             Result(Policy::kPathwise, 100.9)};
  EXPECT_EQ(VerdictLines(results, Decide(results)),
            "best policy you can set: queue-depth (the only kernel iopolicy "
            "run)\n"
            "best overall: queue-depth, the best you can set (pathwise is "
            "within 1 %)\n");
  results = {Result(Policy::kPathwise, 90)};
  EXPECT_THAT(VerdictLines(results, Decide(results)),
              HasSubstr("best policy you can set: none run"));
  results = {Result(Policy::kNuma, 0), Result(Policy::kPathwise, 0)};
  EXPECT_EQ(VerdictLines(results, Decide(results)),
            "best policy you can set: none: no policy completed an I/O\n");
  results = {Result(Policy::kNuma, 0), Result(Policy::kQueueDepth, 50)};
  EXPECT_THAT(VerdictLines(results, Decide(results)),
              HasSubstr("queue-depth (numa completed nothing)"));
}

TEST(Verdict, XBestIsThroughputOverTheBest) {
  const std::vector<PolicyResult> results = {
      Result(Policy::kNuma, 50), Result(Policy::kQueueDepth, 150, 50),
      Result(Policy::kPathwise, 100)};
  EXPECT_THAT(XBest(results), ::testing::ElementsAre(0.25, 1.0, 0.5));
}

// Two equal paths; p0 gains 20 ms at 2 s and goes inaccessible at 4 s: three
// phases, each with a different best policy.
constexpr char kPhased[] = R"([scenario]
name = phased
description = p0 +20 ms at 2 s, inaccessible at 4 s
duration = 6s
seed = 3

[workload]
numjobs = 2
iodepth = 16
bs = 4k
read = 100%

[path p0]
latency = 200us
parallelism = 16
service = 1ms

[path p1]
latency = 200us
parallelism = 16
service = 1ms

[events]
0s p1 delay 0ms
2s p0 delay 20ms
4s p0 ana inaccessible
)";

std::string TempDir() {
  char dir[] = "/tmp/pathwise-verdict-XXXXXX";
  EXPECT_NE(mkdtemp(dir), nullptr);
  return dir;
}

// The test's own reading of a verdict: the best kernel iopolicy by
// throughput, and its ratio to the runner-up, as the line should say them.
std::string ExpectedSettableLine(const std::vector<PolicyResult>& results) {
  const PolicyResult* best = nullptr;
  const PolicyResult* second = nullptr;
  for (const PolicyResult& r : results) {
    if (r.policy != Policy::kNuma && r.policy != Policy::kRoundRobin &&
        r.policy != Policy::kQueueDepth) {
      continue;
    }
    if (best == nullptr || Throughput(r) > Throughput(*best)) {
      second = best;
      best = &r;
    } else if (second == nullptr || Throughput(r) > Throughput(*second)) {
      second = &r;
    }
  }
  return absl::StrFormat("best policy you can set: %s (%.2f× %s",
                         policy::PolicyName(best->policy),
                         Throughput(*best) / Throughput(*second),
                         policy::PolicyName(second->policy));
}

std::string Shell(const std::string& cmd) {
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return "popen failed";
  std::string out;
  char buf[256];
  while (fgets(buf, sizeof buf, p) != nullptr) out += buf;
  const int rc = pclose(p);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return rc == 0 ? out : absl::StrFormat("exit %d: %s", rc, out);
}

TEST(Verdict, PhasedScenarioEndToEnd) {
  const std::string dir = TempDir();
  const std::string scn = dir + "/phased.scn", svg = dir + "/phased.svg";
  {
    std::ofstream f(scn);
    f << kPhased;
  }
  std::ostringstream out, err;
  ASSERT_EQ(RunLabCommandLine({"--scenario", scn, "--jobs=2", "--plot", svg},
                              out, err),
            0)
      << err.str();
  const std::string text = out.str();

  // The same runs, simulated here, give the numbers the verdicts must name.
  absl::StatusOr<Scenario> sc = LoadScenario(scn);
  ASSERT_TRUE(sc.ok()) << sc.status();
  const std::vector<Phase> phases = Phases(*sc);
  ASSERT_EQ(phases.size(), 3u);
  EXPECT_EQ(phases[1].label, "p0 delay 20ms");
  EXPECT_EQ(phases[2].label, "p0 ana inaccessible");
  TimelineRecorder timeline(*sc, policy::AllPolicies().size(), 60);
  const std::vector<PolicyResult> whole =
      RunPolicies(*sc, policy::AllPolicies(), sc->seed, 2, nullptr, &timeline);
  std::vector<std::vector<PolicyResult>> by_phase(phases.size());
  for (size_t i = 0; i < whole.size(); ++i) {
    const Timeline t = timeline.Result(i, whole[i]);
    for (size_t p = 0; p < phases.size(); ++p) {
      by_phase[p].push_back(t.phases[p]);
    }
  }

  // A section per phase, in order, each with its own verdict, then the
  // whole run's.
  size_t at = 0;
  for (size_t p = 0; p < phases.size(); ++p) {
    const std::string heading = absl::StrFormat(
        "phase %d of 3, %g-%g s: %s\n", p + 1, phases[p].start_ns / 1e9,
        phases[p].end_ns / 1e9, phases[p].label);
    const size_t h = text.find(heading, at);
    ASSERT_NE(h, std::string::npos) << heading << "in\n" << text;
    const size_t v = text.find(ExpectedSettableLine(by_phase[p]), h);
    const size_t next = text.find("phase ", h + heading.size());
    EXPECT_NE(v, std::string::npos)
        << ExpectedSettableLine(by_phase[p]) << "\nin\n"
        << text;
    EXPECT_LT(v, next == std::string::npos ? text.find("whole run") : next);
    at = h + heading.size();
  }
  const size_t w = text.find("whole run, 0-6 s\n", at);
  ASSERT_NE(w, std::string::npos) << text;
  EXPECT_NE(text.find(ExpectedSettableLine(whole), w), std::string::npos)
      << ExpectedSettableLine(whole) << "\nin\n"
      << text;
  // Four verdicts and four tables with the ×best column.
  size_t verdicts = 0, headers = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StartsWith(line, "best policy you can set: ")) ++verdicts;
    if (absl::StartsWith(line, "policy ") &&
        absl::StrContains(line, "  ×best  ")) {
      ++headers;
    }
  }
  EXPECT_EQ(verdicts, 4u);
  EXPECT_EQ(headers, 4u);

  // ×best in the whole run's table: the best policy's row says 1.00, each
  // other's its throughput over the best's.
  const std::vector<double> xbest = XBest(whole);
  const std::string whole_table = text.substr(w);
  for (size_t i = 0; i < whole.size(); ++i) {
    const std::string name =
        absl::StrCat(policy::PolicyName(whole[i].policy),
                     policy::IsKernelIopolicy(whole[i].policy) ? "" : "*");
    const size_t row = whole_table.find("\n" + name + " ");
    ASSERT_NE(row, std::string::npos) << name << " in\n" << whole_table;
    const std::string line =
        whole_table.substr(row + 1, whole_table.find('\n', row + 1) - row - 1);
    EXPECT_THAT(line, HasSubstr(absl::StrFormat("  %5.2f  ", xbest[i])))
        << line;
  }
  EXPECT_THAT(whole_table, HasSubstr("  1.00  "));
  // Non-settable policies are marked and explained.
  EXPECT_THAT(text, HasSubstr("\npathwise* "));
  EXPECT_THAT(text, HasSubstr("* not a kernel iopolicy"));

  // The plot: well-formed XML (xmllint parses it), one series per policy,
  // each with a line in both panels, and the two phase boundaries.
  EXPECT_EQ(Shell("xmllint --noout " + svg + " 2>&1"), "")
      << "xmllint (libxml2-utils) missing or the SVG is malformed";
  EXPECT_EQ(Shell("xmllint --xpath \"count(//*[local-name()='g'][@class="
                  "'series'])\" " +
                  svg),
            "6");
  for (Policy p : policy::AllPolicies()) {
    const std::string xp = absl::StrFormat(
        "count(//*[local-name()='g'][@data-policy='%s']/"
        "*[local-name()='polyline'])>=2",
        policy::PolicyName(p));
    EXPECT_EQ(Shell("xmllint --xpath \"" + xp + "\" " + svg), "true")
        << policy::PolicyName(p);
  }
  EXPECT_EQ(Shell("xmllint --xpath \"count(//*[local-name()='g'][@class="
                  "'phase-boundary'])\" " +
                  svg),
            "2");
  std::filesystem::remove_all(dir);
}

// A file with more event times than tables make sense for: one table for
// the whole run, which says why, and no memory per phase.
TEST(Verdict, ManyPhasesGetOneTable) {
  std::string text = kPhased;
  text = text.substr(0, text.find("[events]"));
  absl::StrAppend(&text, "[events]\n");
  for (int ms = 100; ms < 6000; ms += 100) {
    absl::StrAppend(&text, ms, "ms p0 delay ", ms % 200 == 0 ? 0 : 5, "ms\n");
  }
  absl::StatusOr<Scenario> sc = ParseScenario(text, "many.scn");
  ASSERT_TRUE(sc.ok()) << sc.status();
  ASSERT_EQ(Phases(*sc).size(), 60u);
  const std::string dir = TempDir();
  {
    std::ofstream f(dir + "/many.scn");
    f << text;
  }
  std::ostringstream out, err;
  ASSERT_EQ(RunLabCommandLine({"--scenario", dir + "/many.scn", "--jobs=2",
                               "--policies=numa,queue-depth"},
                              out, err),
            0)
      << err.str();
  EXPECT_THAT(out.str(), HasSubstr("60 phases: too many for a table each"));
  EXPECT_THAT(out.str(), ::testing::Not(HasSubstr("phase 1 of")));
  EXPECT_THAT(out.str(), HasSubstr("best policy you can set: "));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace pathwise::lab

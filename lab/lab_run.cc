// SPDX-License-Identifier: Apache-2.0
// `pathwise lab`'s runs: a scenario under each policy (with its trace),
// a family drawn to files, and the league over a family. The flags are in
// lab_cli.cc.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lab/family.h"
#include "lab/generate.h"
#include "lab/lab_cli.h"
#include "lab/league.h"
#include "lab/league_plot.h"
#include "lab/parallel.h"
#include "lab/report.h"
#include "lab/timeline.h"
#include "lab/timeline_plot.h"
#include "lab/trace.h"

namespace pathwise::lab {

std::vector<PolicyResult> RunPolicies(
    const Scenario& sc, const std::vector<policy::Policy>& policies,
    uint64_t seed, int jobs, TraceRecorder* trace, TimelineRecorder* timeline) {
  std::vector<PolicyResult> results(policies.size());
  ParallelFor(policies.size(), jobs, [&](size_t i) {
    IoObserver observer;
    if (trace && timeline) {
      observer = [a = trace->Observer(i),
                  b = timeline->Observer(i)](const IoTrace& t) mutable {
        a(t);
        b(t);
      };
    } else if (trace) {
      observer = trace->Observer(i);
    } else if (timeline) {
      observer = timeline->Observer(i);
    }
    results[i] = Simulate(sc, policies[i], seed, observer);
  });
  return results;
}

namespace {

// A million rows of about 90 bytes per policy.
constexpr size_t kTraceRowsPerPolicy = 1'000'000;
// Points per line of --plot: enough to show a step, few enough to stay a
// small file (a latency histogram each, ~20 KiB, while it runs).
constexpr int kPlotBins = 120;

// Writes `text` to `path`; false, with the error said, when it cannot.
bool WriteFile(const std::string& path, absl::string_view text,
               std::ostream& err) {
  std::ofstream f(path, std::ios::trunc);
  f << text;
  f.close();
  if (!f) {
    err << "pathwise: lab: cannot write " << path << "\n";
    return false;
  }
  return true;
}

// --generate: the drawn scenarios as DIR/gen-SEED-I.scn; exit code.
int Generate(const LabOptions& o, std::ostream& out, std::ostream& err) {
  const uint64_t seed = o.seed.value_or(1);
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (ec) {
    err << "pathwise: lab: --out " << o.out_dir << ": " << ec.message() << "\n";
    return 1;
  }
  for (int i = 0; i < o.generate; ++i) {
    const Scenario s = DrawScenario(seed, i);
    const std::string path = absl::StrCat(o.out_dir, "/", s.name, ".scn");
    std::ofstream f(path, std::ios::trunc);
    f << ScenarioText(s);
    f.close();
    if (!f) {
      err << "pathwise: lab: cannot write " << path << "\n";
      return 1;
    }
    out << path << "\n";
  }
  out.flush();
  return out.good() ? 0 : 1;
}

// --league: the family's league table (and plot); exit code.
int RunLeague(const LabOptions& o, std::ostream& out, std::ostream& err) {
  const uint64_t seed = o.seed.value_or(1);
  std::vector<Scenario> scenarios;
  for (int i = 0; i < o.league; ++i) scenarios.push_back(DrawScenario(seed, i));
  const std::vector<ScenarioOutcome> family =
      RunFamily(scenarios, o.policies, o.jobs, /*by_phase=*/true);
  const std::vector<LeagueEntry> league = League(family);
  const std::string title = absl::StrCat("pathwise lab league: ", o.league,
                                         " scenarios of the family "
                                         "(lab/generate.h), seed ",
                                         seed);
  for (const auto& [path, text] :
       {std::pair(o.plot, o.plot.empty() ? "" : LeaguePlotSvg(title, family)),
        std::pair(o.csv, o.csv.empty() ? "" : FormatFamilyCsv(family))}) {
    if (!path.empty() && !WriteFile(path, text, err)) return 1;
  }
  if (o.format == "csv") {
    out << FormatFamilyCsv(family);
  } else if (o.format == "json") {
    out << FormatLeagueJson(title, family, league);
  } else {
    out << FormatLeague(title, family, league, 12);
  }
  out.flush();
  return out.good() ? 0 : 1;
}

}  // namespace

int RunLab(const LabOptions& o, std::ostream& out, std::ostream& err) {
  if (o.help) {
    out << LabHelpText();
    return 0;
  }
  if (o.generate > 0) return Generate(o, out, err);
  if (o.league > 0) return RunLeague(o, out, err);
  absl::StatusOr<Scenario> sc = LoadScenario(o.scenario);
  if (!sc.ok()) {
    err << "pathwise: lab: " << sc.status().message() << "\n";
    return 1;
  }
  const uint64_t seed = o.seed.value_or(sc->seed);
  std::optional<TraceRecorder> trace;
  if (!o.trace.empty()) trace.emplace(o.policies, kTraceRowsPerPolicy);
  TimelineRecorder timeline(*sc, o.policies.size(), kPlotBins);
  const std::vector<PolicyResult> results = RunPolicies(
      *sc, o.policies, seed, o.jobs, trace ? &*trace : nullptr, &timeline);
  std::vector<Timeline> timelines;
  for (size_t i = 0; i < results.size(); ++i) {
    timelines.push_back(timeline.Result(i, results[i]));
  }
  const std::vector<Phase>& phases = timeline.phases();
  std::vector<std::vector<PolicyResult>> by_phase;
  if (phases.size() <= kMaxPhaseTables) {
    by_phase.resize(phases.size());
    for (size_t p = 0; p < phases.size(); ++p) {
      for (const Timeline& t : timelines) by_phase[p].push_back(t.phases[p]);
    }
  }
  if (!o.plot.empty() &&
      !WriteFile(o.plot, TimelinePlotSvg(*sc, o.policies, phases, timelines),
                 err)) {
    return 1;
  }
  if (trace && !WriteFile(o.trace, trace->Csv(*sc), err)) return 1;
  if (trace && trace->dropped() > 0) {
    err << "pathwise: lab: --trace kept the first " << kTraceRowsPerPolicy
        << " completions of each policy; " << trace->dropped()
        << " more not written\n";
  }
  if (o.format == "csv") {
    out << FormatCsv(*sc, seed, results);
  } else if (o.format == "json") {
    out << FormatJson(*sc, seed, results, phases, by_phase);
  } else {
    out << FormatTable(*sc, seed, results, phases, by_phase);
  }
  out.flush();
  return out.good() ? 0 : 1;
}

}  // namespace pathwise::lab

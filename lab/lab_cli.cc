#include "lab/lab_cli.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <thread>
#include <utility>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lab/family.h"
#include "lab/generate.h"
#include "lab/league.h"
#include "lab/league_plot.h"
#include "lab/report.h"
#include "lab/trace.h"

namespace pathwise::lab {

namespace {

constexpr char kPolicyList[] =
    "numa, round-robin, queue-depth, latency, pathwise, hst or all";

// A CLI11 check whose failure reads "lab: <problem>"; `problem` returns ""
// for good text. CLI11 prefixes the option's name, which LabUsageError
// strips again.
CLI::Validator LabCheck(
    std::function<std::string(const std::string&)> problem) {
  return CLI::Validator(
      [problem = std::move(problem)](std::string& text) {
        std::string p = problem(text);
        return p.empty() ? p : absl::StrCat("lab: ", p);
      },
      "");
}

// "want X, got 'text'" for flag `name`.
std::string Want(absl::string_view name, absl::string_view want,
                 absl::string_view text) {
  return absl::StrCat("--", name, ": want ", want, ", got '", text, "'");
}

// Comma-separated policy names ("all" for every policy); the problem, if
// any, as LabCheck wants it.
std::string ParsePolicies(absl::string_view text,
                          std::vector<policy::Policy>* out) {
  out->clear();
  for (absl::string_view p : absl::StrSplit(text, ',')) {
    if (p == "all") {
      for (policy::Policy q : policy::AllPolicies()) out->push_back(q);
      continue;
    }
    std::optional<policy::Policy> policy = policy::PolicyFromName(p);
    if (!policy.has_value()) {
      return absl::StrCat("--policies: unknown policy '", p, "' (want ",
                          kPolicyList, ")");
    }
    out->push_back(*policy);
  }
  return "";
}

std::string ParseSeed(absl::string_view text, uint64_t* seed) {
  return absl::SimpleAtoi(text, seed)
             ? ""
             : Want("seed", "a non-negative integer", text);
}

std::string ParseJobs(absl::string_view text, int* jobs) {
  return absl::SimpleAtoi(text, jobs) && *jobs >= 0 && *jobs <= 1024
             ? ""
             : Want("jobs", "0..1024", text);
}

std::string ParseCount(absl::string_view flag, absl::string_view text, int* n) {
  return absl::SimpleAtoi(text, n) && *n >= 1 && *n <= 100000
             ? ""
             : Want(flag, "1..100000", text);
}

// CLI11 prefixes the messages of option errors with the option's name
// ("--jobs: ..."); the flag's own text follows it.
absl::string_view AfterOptionName(absl::string_view what) {
  if (absl::StartsWith(what, "-")) {
    if (size_t colon = what.find(": "); colon != absl::string_view::npos) {
      return what.substr(colon + 2);
    }
  }
  return what;
}

}  // namespace

void AddLabFlags(CLI::App& app, LabOptions* o) {
  app.description("simulate the path selection policies on a scenario file");
  app.footer(
      "Replays a scenario (paths, scripted faults, a closed-loop workload) "
      "in a\ndeterministic simulator under each path selection policy and "
      "prints\nMiB/s, IOPS and p50/p99/p999 latency per policy and op. "
      "Scenario files:\nlab/README.md; examples in lab/scenarios/.");
  // Unknown flags and stray arguments are left to CheckLabArgs, which words
  // them like the rest of lab's errors.
  app.allow_extras();
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);

  app.add_option("--scenario", o->scenario,
                 "scenario file (format: lab/README.md)")
      ->type_name("FILE")
      ->check(LabCheck([](const std::string& text) {
        return text.empty() ? std::string("--scenario is empty")
                            : std::string();
      }));
  app.add_option_function<std::string>(
         "--policies",
         [o](const std::string& text) { ParsePolicies(text, &o->policies); },
         "comma-separated policies to simulate: numa, round-robin, "
         "queue-depth, latency, pathwise, hst, or all")
      ->type_name("LIST")
      ->default_str("all")
      ->check(LabCheck([](const std::string& text) {
        std::vector<policy::Policy> policies;
        return ParsePolicies(text, &policies);
      }));
  app.add_option_function<std::string>(
         "--seed",
         [o](const std::string& text) {
           uint64_t seed = 0;
           ParseSeed(text, &seed);
           o->seed = seed;
         },
         "PRNG seed (default: the scenario's, else 1)")
      ->type_name("N")
      ->check(LabCheck([](const std::string& text) {
        uint64_t seed;
        return ParseSeed(text, &seed);
      }));
  app.add_option("--format", o->format, "output format: table, csv or json")
      ->type_name("F")
      ->default_str(o->format)
      ->check(LabCheck([](const std::string& text) {
        return text == "table" || text == "csv" || text == "json"
                   ? std::string()
                   : Want("format", "table, csv or json", text);
      }));
  app.add_option_function<std::string>(
         "--jobs", [o](const std::string& text) { ParseJobs(text, &o->jobs); },
         "policies simulated in parallel, 0..1024 (0: one per core); the "
         "output does not depend on it")
      ->type_name("N")
      ->default_str(std::to_string(o->jobs))
      ->check(LabCheck([](const std::string& text) {
        int jobs;
        return ParseJobs(text, &jobs);
      }));
  app.add_option_function<std::string>(
         "--generate",
         [o](const std::string& text) {
           ParseCount("generate", text, &o->generate);
         },
         "draw N scenarios of the family in lab/generate.h (seeded by "
         "--seed, default 1) and write them to --out DIR as .scn files "
         "instead of running one")
      ->type_name("N")
      ->check(LabCheck([](const std::string& text) {
        int n;
        return ParseCount("generate", text, &n);
      }));
  app.add_option("--out", o->out_dir, "directory for --generate's files")
      ->type_name("DIR")
      ->check(LabCheck([](const std::string& text) {
        return text.empty() ? std::string("--out is empty") : std::string();
      }));
  app.add_option_function<std::string>(
         "--league",
         [o](const std::string& text) {
           ParseCount("league", text, &o->league);
         },
         "run N scenarios of the family (seeded by --seed, default 1) under "
         "each policy and print the league table: throughput against the "
         "best, tails, losses, and the selector's goals")
      ->type_name("N")
      ->check(LabCheck([](const std::string& text) {
        int n;
        return ParseCount("league", text, &n);
      }));
  app.add_option("--csv", o->csv,
                 "with --league: also write every run (scenario, policy, "
                 "MiB/s, ratio to the best other, p99, p999) as CSV")
      ->type_name("FILE")
      ->check(LabCheck([](const std::string& text) {
        return text.empty() ? std::string("--csv is empty") : std::string();
      }));
  app.add_option("--trace", o->trace,
                 "with --scenario: also write every completed I/O of each "
                 "policy's run (path, times, latency, failovers) as CSV, up "
                 "to a million per policy")
      ->type_name("FILE")
      ->check(LabCheck([](const std::string& text) {
        return text.empty() ? std::string("--trace is empty") : std::string();
      }));
  app.add_option("--plot", o->plot,
                 "with --league: also write the league as an SVG picture")
      ->type_name("FILE.svg")
      ->check(LabCheck([](const std::string& text) {
        return text.empty() ? std::string("--plot is empty") : std::string();
      }));
}

absl::Status CheckLabArgs(const CLI::App& app, const LabOptions& o) {
  for (const std::string& arg : app.remaining()) {
    if (absl::StartsWith(arg, "-")) {
      return absl::InvalidArgumentError(
          absl::StrCat("lab: unknown flag ", arg.substr(0, arg.find('='))));
    }
    return absl::InvalidArgumentError(
        absl::StrCat("lab: unexpected argument '", arg, "'"));
  }
  if ((!o.plot.empty() || !o.csv.empty()) && o.league == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "lab: --", o.plot.empty() ? "csv" : "plot", " is for --league"));
  }
  if (!o.trace.empty() && (o.league > 0 || o.generate > 0)) {
    return absl::InvalidArgumentError("lab: --trace is for a --scenario run");
  }
  if (o.league > 0) {
    if (!o.scenario.empty() || o.generate > 0) {
      return absl::InvalidArgumentError(
          "lab: --league runs drawn scenarios: not with --scenario or "
          "--generate");
    }
    if (!o.out_dir.empty()) {
      return absl::InvalidArgumentError("lab: --out is for --generate");
    }
    return absl::OkStatus();
  }
  if (o.generate > 0) {
    if (!o.scenario.empty()) {
      return absl::InvalidArgumentError(
          "lab: --generate draws scenarios, --scenario runs one: not both");
    }
    if (o.out_dir.empty()) {
      return absl::InvalidArgumentError(
          "lab: --generate N needs --out DIR for its files");
    }
    return absl::OkStatus();
  }
  if (!o.out_dir.empty()) {
    return absl::InvalidArgumentError("lab: --out is for --generate");
  }
  if (o.scenario.empty()) {
    return absl::InvalidArgumentError("lab: --scenario FILE is required");
  }
  return absl::OkStatus();
}

absl::Status LabUsageError(const CLI::ParseError& e) {
  absl::string_view what = e.what();
  if (dynamic_cast<const CLI::ValidationError*>(&e) != nullptr) {
    return absl::InvalidArgumentError(AfterOptionName(what));
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr) {
    // The only mismatch a single-valued option has: no value at all.
    return absl::InvalidArgumentError(absl::StrCat(
        "lab: ", what.substr(0, what.find(':')), " needs a value"));
  }
  return absl::InvalidArgumentError(absl::StrCat("lab: ", what));
}

absl::StatusOr<LabOptions> ParseLabArgs(const std::vector<std::string>& args) {
  LabOptions o;
  CLI::App app;
  AddLabFlags(app, &o);
  // CLI11 takes the arguments last first.
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    o.help = true;
    return o;
  } catch (const CLI::ParseError& e) {
    return LabUsageError(e);
  }
  if (absl::Status s = CheckLabArgs(app, o); !s.ok()) return s;
  return o;
}

std::string LabHelpText() {
  LabOptions o;
  CLI::App app("", "pathwise lab");
  AddLabFlags(app, &o);
  return app.help();
}

std::vector<PolicyResult> RunPolicies(
    const Scenario& sc, const std::vector<policy::Policy>& policies,
    uint64_t seed, int jobs, TraceRecorder* trace) {
  std::vector<PolicyResult> results(policies.size());
  if (jobs <= 0) jobs = static_cast<int>(std::thread::hardware_concurrency());
  jobs = std::clamp<int>(jobs, 1, std::max<int>(1, policies.size()));
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < policies.size();) {
      results[i] = Simulate(sc, policies[i], seed,
                            trace ? trace->Observer(i) : IoObserver{});
    }
  };
  std::vector<std::thread> threads;
  for (int t = 1; t < jobs; ++t) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  return results;
}

int RunLabCommandLine(const std::vector<std::string>& args, std::ostream& out,
                      std::ostream& err) {
  absl::StatusOr<LabOptions> o = ParseLabArgs(args);
  if (!o.ok()) {
    err << "pathwise: " << o.status().message() << "\n";
    return 2;
  }
  return RunLab(*o, out, err);
}

namespace {

// A million rows of about 90 bytes per policy.
constexpr size_t kTraceRowsPerPolicy = 1'000'000;

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
      RunFamily(scenarios, o.policies, o.jobs);
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
  const std::vector<PolicyResult> results =
      RunPolicies(*sc, o.policies, seed, o.jobs, trace ? &*trace : nullptr);
  if (trace && !WriteFile(o.trace, trace->Csv(*sc), err)) return 1;
  if (trace && trace->dropped() > 0) {
    err << "pathwise: lab: --trace kept the first " << kTraceRowsPerPolicy
        << " completions of each policy; " << trace->dropped()
        << " more not written\n";
  }
  if (o.format == "csv") {
    out << FormatCsv(*sc, seed, results);
  } else if (o.format == "json") {
    out << FormatJson(*sc, seed, results);
  } else {
    out << FormatTable(*sc, seed, results);
  }
  out.flush();
  return out.good() ? 0 : 1;
}

}  // namespace pathwise::lab

// SPDX-License-Identifier: Apache-2.0
#include "lab/lab_cli.h"

#include <algorithm>
#include <functional>
#include <utility>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

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
                 "also write an SVG picture: with --scenario, throughput and "
                 "p99 per policy over time with the phases marked; with "
                 "--league, the league")
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
  if (!o.csv.empty() && o.league == 0) {
    return absl::InvalidArgumentError("lab: --csv is for --league");
  }
  if (!o.plot.empty() && o.generate > 0) {
    return absl::InvalidArgumentError(
        "lab: --plot is for a --scenario run or --league");
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

int RunLabCommandLine(const std::vector<std::string>& args, std::ostream& out,
                      std::ostream& err) {
  absl::StatusOr<LabOptions> o = ParseLabArgs(args);
  if (!o.ok()) {
    err << "pathwise: " << o.status().message() << "\n";
    return 2;
  }
  return RunLab(*o, out, err);
}

}  // namespace pathwise::lab

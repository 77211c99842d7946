#include "lab/lab_cli.h"

#include <algorithm>
#include <atomic>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lab/report.h"

namespace pathwise::lab {

std::string LabHelpText() {
  return "usage: pathwise lab --scenario FILE [--policies LIST] [--seed N]\n"
         "                    [--format table|csv|json] [--jobs N]\n"
         "\n"
         "Replays a scenario (paths, scripted faults, a closed-loop "
         "workload) in a\n"
         "deterministic simulator under each path selection policy and "
         "prints\n"
         "MiB/s, IOPS and p50/p99/p999 latency per policy and op.\n"
         "\n"
         "  --scenario FILE   scenario file (format: lab/README.md; examples "
         "in\n"
         "                    lab/scenarios/)\n"
         "  --policies LIST   comma-separated, default all: numa, "
         "round-robin,\n"
         "                    queue-depth, latency, pathwise, hst\n"
         "  --seed N          PRNG seed (default: the scenario's, else 1)\n"
         "  --format F        table (default), csv or json\n"
         "  --jobs N          policies simulated in parallel (default: one "
         "per\n"
         "                    core); the output does not depend on it\n";
}

absl::StatusOr<LabOptions> ParseLabArgs(const std::vector<std::string>& args) {
  LabOptions o;
  bool have_scenario = false;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i];
    if (a == "--help" || a == "-h" || a == "help") {
      o.help = true;
      return o;
    }
    if (a.rfind("--", 0) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("lab: unexpected argument '", a, "'"));
    }
    std::string name = a.substr(2), value;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    } else {
      if (name != "scenario" && name != "policies" && name != "seed" &&
          name != "format" && name != "jobs") {
        return absl::InvalidArgumentError(
            absl::StrCat("lab: unknown flag --", name));
      }
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("lab: --", name, " needs a value"));
      }
      value = args[++i];
    }
    if (name == "scenario") {
      if (value.empty()) {
        return absl::InvalidArgumentError("lab: --scenario is empty");
      }
      o.scenario = value;
      have_scenario = true;
    } else if (name == "policies") {
      o.policies.clear();
      for (absl::string_view p : absl::StrSplit(value, ',')) {
        if (p == "all") {
          for (Policy q : AllPolicies()) o.policies.push_back(q);
          continue;
        }
        std::optional<Policy> policy = PolicyFromName(absl::string_view(p));
        if (!policy.has_value()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "lab: --policies: unknown policy '", p,
              "' (want numa, round-robin, queue-depth, latency, pathwise, "
              "hst or all)"));
        }
        o.policies.push_back(*policy);
      }
    } else if (name == "seed") {
      uint64_t seed;
      if (!absl::SimpleAtoi(value, &seed)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "lab: --seed: want a non-negative integer, got '", value, "'"));
      }
      o.seed = seed;
    } else if (name == "format") {
      if (value != "table" && value != "csv" && value != "json") {
        return absl::InvalidArgumentError(absl::StrCat(
            "lab: --format: want table, csv or json, got '", value, "'"));
      }
      o.format = value;
    } else if (name == "jobs") {
      int jobs;
      if (!absl::SimpleAtoi(value, &jobs) || jobs < 0 || jobs > 1024) {
        return absl::InvalidArgumentError(
            absl::StrCat("lab: --jobs: want 0..1024, got '", value, "'"));
      }
      o.jobs = jobs;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("lab: unknown flag --", name));
    }
  }
  if (!have_scenario) {
    return absl::InvalidArgumentError("lab: --scenario FILE is required");
  }
  return o;
}

std::vector<PolicyResult> RunPolicies(const Scenario& sc,
                                      const std::vector<Policy>& policies,
                                      uint64_t seed, int jobs) {
  std::vector<PolicyResult> results(policies.size());
  if (jobs <= 0) jobs = static_cast<int>(std::thread::hardware_concurrency());
  jobs = std::clamp<int>(jobs, 1, std::max<int>(1, policies.size()));
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < policies.size();) {
      results[i] = Simulate(sc, policies[i], seed);
    }
  };
  std::vector<std::thread> threads;
  for (int t = 1; t < jobs; ++t) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  return results;
}

int RunLab(const std::vector<std::string>& args, std::ostream& out,
           std::ostream& err) {
  absl::StatusOr<LabOptions> o = ParseLabArgs(args);
  if (!o.ok()) {
    err << "pathwise: " << o.status().message() << "\n";
    return 2;
  }
  if (o->help) {
    out << LabHelpText();
    return 0;
  }
  absl::StatusOr<Scenario> sc = LoadScenario(o->scenario);
  if (!sc.ok()) {
    err << "pathwise: lab: " << sc.status().message() << "\n";
    return 1;
  }
  const uint64_t seed = o->seed.value_or(sc->seed);
  const std::vector<PolicyResult> results =
      RunPolicies(*sc, o->policies, seed, o->jobs);
  if (o->format == "csv") {
    out << FormatCsv(*sc, seed, results);
  } else if (o->format == "json") {
    out << FormatJson(*sc, seed, results);
  } else {
    out << FormatTable(*sc, seed, results);
  }
  out.flush();
  return out.good() ? 0 : 1;
}

}  // namespace pathwise::lab

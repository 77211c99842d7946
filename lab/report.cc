// SPDX-License-Identifier: Apache-2.0
#include "lab/report.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "lab/verdict.h"
#include "nlohmann/json.hpp"

namespace pathwise::lab {
namespace {

uint64_t TotalIos(const PolicyResult& r) {
  uint64_t t = 0;
  for (uint64_t n : r.path_ios) t += n;
  return t;
}

double Share(const PolicyResult& r, size_t path) {
  const uint64_t t = TotalIos(r);
  return t == 0 ? 0.0 : 100.0 * static_cast<double>(r.path_ios[path]) / t;
}

// Ops the workload issued in any policy's run.
std::vector<int> Ops(const std::vector<PolicyResult>& results) {
  std::vector<int> ops;
  for (int op = 0; op < 2; ++op) {
    for (const PolicyResult& r : results) {
      if (r.ops[op].ios > 0) {
        ops.push_back(op);
        break;
      }
    }
  }
  return ops;
}

// A CSV field as RFC 4180 has it: quoted, with quotes doubled, when it
// holds a comma, a quote or a line break (names come from the scenario
// file, which allows them).
std::string CsvField(absl::string_view s) {
  if (s.find_first_of(",\"\r\n") == absl::string_view::npos) {
    return std::string(s);
  }
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

// One table: a row per policy and op, with ×best on the policy's first row
// and "*" after a policy the kernel cannot be set to.
std::string Table(const Scenario& sc,
                  const std::vector<PolicyResult>& results) {
  std::string shares = "I/O share";
  for (const PathSpec& p : sc.paths) absl::StrAppend(&shares, " ", p.name);
  // "×" is two bytes: the header pads it by hand to the column's width.
  std::string out = absl::StrFormat(
      "%-12s %-5s %9s %9s %9s %9s %9s  ×best  %s\n", "policy", "op", "MiB/s",
      "IOPS", "p50 ms", "p99 ms", "p999 ms", shares);
  const std::vector<int> ops = Ops(results);
  const std::vector<double> xbest = XBest(results);
  bool any_unsettable = false;
  for (size_t i = 0; i < results.size(); ++i) {
    const PolicyResult& r = results[i];
    const bool settable = policy::IsKernelIopolicy(r.policy);
    any_unsettable = any_unsettable || !settable;
    const std::string name =
        absl::StrCat(policy::PolicyName(r.policy), settable ? "" : "*");
    for (int op : ops) {
      const OpResult& o = r.ops[op];
      std::string share, x;
      if (op == ops.front()) {
        for (size_t p = 0; p < r.path_ios.size(); ++p) {
          absl::StrAppendFormat(&share, "%s%.1f%%", p ? " / " : "",
                                Share(r, p));
        }
        if (r.failovers > 0) {
          absl::StrAppend(&share, "  (", r.failovers, " failovers)");
        }
        x = absl::StrFormat("%.2f", xbest[i]);
      }
      absl::StrAppendFormat(
          &out, "%-12s %-5s %9.1f %9.0f %9.2f %9.2f %9.2f  %5s  %s\n", name,
          kOpNames[op], o.mib_s, o.iops, o.p50_ms, o.p99_ms, o.p999_ms, x,
          share);
    }
  }
  if (any_unsettable) {
    absl::StrAppend(&out,
                    "* not a kernel iopolicy: simulated for comparison, "
                    "cannot be set in /sys/class/nvme-subsystem/*/iopolicy\n");
  }
  return out;
}

std::string Seconds(int64_t ns) { return absl::StrFormat("%g", ns / 1e9); }

}  // namespace

std::string FormatTable(
    const Scenario& sc, uint64_t seed, const std::vector<PolicyResult>& results,
    const std::vector<Phase>& phases,
    const std::vector<std::vector<PolicyResult>>& by_phase) {
  const Workload& w = sc.workload;
  std::string out = absl::StrFormat(
      "scenario %s: %s\n%.0f s, seed %d, %d jobs x iodepth %d, bs %d, "
      "%.0f%% read\n\n",
      sc.name, sc.description, sc.duration_ns / 1e9, seed, w.numjobs, w.iodepth,
      w.bs, w.read_fraction * 100);
  if (phases.size() > 1 && by_phase.size() == phases.size()) {
    for (size_t p = 0; p < phases.size(); ++p) {
      absl::StrAppend(&out, "phase ", p + 1, " of ", phases.size(), ", ",
                      Seconds(phases[p].start_ns), "-",
                      Seconds(phases[p].end_ns), " s: ", phases[p].label, "\n",
                      Table(sc, by_phase[p]),
                      VerdictLines(by_phase[p], Decide(by_phase[p])), "\n");
    }
    absl::StrAppend(&out, "whole run, 0-", Seconds(sc.duration_ns), " s\n");
  } else if (phases.size() > 1) {
    absl::StrAppend(&out, phases.size(),
                    " phases: too many for a table each (--plot marks them); "
                    "the whole run\n");
  }
  absl::StrAppend(&out, Table(sc, results),
                  VerdictLines(results, Decide(results)));
  return out;
}

std::string FormatCsv(const Scenario& sc, uint64_t seed,
                      const std::vector<PolicyResult>& results) {
  std::string out =
      "scenario,seed,policy,op,mib_s,iops,p50_ms,p99_ms,p999_ms,failovers";
  for (const PathSpec& p : sc.paths) {
    absl::StrAppend(&out, ",", CsvField(absl::StrCat("share_", p.name)));
  }
  out += "\n";
  const std::string scenario = CsvField(sc.name);
  for (const PolicyResult& r : results) {
    for (int op : Ops(results)) {
      const OpResult& o = r.ops[op];
      absl::StrAppendFormat(
          &out, "%s,%d,%s,%s,%.3f,%.1f,%.4f,%.4f,%.4f,%d", scenario, seed,
          CsvField(policy::PolicyName(r.policy)), kOpNames[op], o.mib_s, o.iops,
          o.p50_ms, o.p99_ms, o.p999_ms, r.failovers);
      for (size_t i = 0; i < r.path_ios.size(); ++i) {
        absl::StrAppendFormat(&out, ",%.2f", Share(r, i));
      }
      out += "\n";
    }
  }
  return out;
}

namespace {

nlohmann::ordered_json ResultsJson(const Scenario& sc,
                                   const std::vector<PolicyResult>& results) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  const std::vector<double> xbest = XBest(results);
  for (size_t i = 0; i < results.size(); ++i) {
    const PolicyResult& r = results[i];
    nlohmann::ordered_json pr;
    pr["policy"] = std::string(policy::PolicyName(r.policy));
    pr["kernel_iopolicy"] = policy::IsKernelIopolicy(r.policy);
    for (int op : Ops(results)) {
      const OpResult& o = r.ops[op];
      pr["ops"][std::string(kOpNames[op])] = {
          {"mib_s", o.mib_s},   {"iops", o.iops},     {"ios", o.ios},
          {"p50_ms", o.p50_ms}, {"p99_ms", o.p99_ms}, {"p999_ms", o.p999_ms}};
    }
    pr["x_best"] = xbest[i];
    for (size_t p = 0; p < r.path_ios.size(); ++p) {
      pr["paths"][sc.paths[p].name] = {{"ios", r.path_ios[p]},
                                       {"share_percent", Share(r, p)}};
    }
    pr["failovers"] = r.failovers;
    out.push_back(std::move(pr));
  }
  return out;
}

nlohmann::ordered_json VerdictJson(const std::vector<PolicyResult>& results) {
  const Verdict v = Decide(results);
  nlohmann::ordered_json j;
  auto name = [&](const std::optional<size_t>& i) {
    return i ? nlohmann::ordered_json(
                   std::string(policy::PolicyName(results[*i].policy)))
             : nlohmann::ordered_json(nullptr);
  };
  j["best_settable"] = name(v.best_settable);
  j["best_overall"] = name(v.best_overall);
  j["overall_vs_settable"] = v.overall_vs_settable;
  j["settable_ratios"] = nlohmann::ordered_json::object();
  for (const auto& [i, ratio] : v.settable_ratios) {
    j["settable_ratios"][std::string(policy::PolicyName(results[i].policy))] =
        ratio;
  }
  std::string text = VerdictLines(results, v);
  if (!text.empty() && text.back() == '\n') text.pop_back();
  j["text"] = text;
  return j;
}

}  // namespace

std::string FormatJson(const Scenario& sc, uint64_t seed,
                       const std::vector<PolicyResult>& results,
                       const std::vector<Phase>& phases,
                       const std::vector<std::vector<PolicyResult>>& by_phase) {
  nlohmann::ordered_json j;
  j["scenario"] = sc.name;
  j["description"] = sc.description;
  j["seed"] = seed;
  j["duration_seconds"] = sc.duration_ns / 1e9;
  j["results"] = ResultsJson(sc, results);
  j["verdict"] = VerdictJson(results);
  if (phases.size() > 1 && by_phase.size() == phases.size()) {
    j["phases"] = nlohmann::ordered_json::array();
    for (size_t p = 0; p < phases.size(); ++p) {
      j["phases"].push_back({{"start_seconds", phases[p].start_ns / 1e9},
                             {"end_seconds", phases[p].end_ns / 1e9},
                             {"events", phases[p].label},
                             {"results", ResultsJson(sc, by_phase[p])},
                             {"verdict", VerdictJson(by_phase[p])}});
    }
  }
  // Names come from the scenario file, which need not be UTF-8: each
  // invalid sequence becomes U+FFFD where nlohmann::json would throw.
  return j.dump(2, ' ', /*ensure_ascii=*/false,
                nlohmann::ordered_json::error_handler_t::replace) +
         "\n";
}

}  // namespace pathwise::lab

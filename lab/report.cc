#include "lab/report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
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

}  // namespace

std::string FormatTable(const Scenario& sc, uint64_t seed,
                        const std::vector<PolicyResult>& results) {
  const Workload& w = sc.workload;
  std::string out = absl::StrFormat(
      "scenario %s: %s\n%.0f s, seed %d, %d jobs x iodepth %d, bs %d, "
      "%.0f%% read\n\n",
      sc.name, sc.description, sc.duration_ns / 1e9, seed, w.numjobs, w.iodepth,
      w.bs, w.read_fraction * 100);
  std::string shares = "I/O share";
  for (const PathSpec& p : sc.paths) absl::StrAppend(&shares, " ", p.name);
  absl::StrAppendFormat(&out, "%-12s %-5s %9s %9s %9s %9s %9s  %s\n", "policy",
                        "op", "MiB/s", "IOPS", "p50 ms", "p99 ms", "p999 ms",
                        shares);
  const std::vector<int> ops = Ops(results);
  for (const PolicyResult& r : results) {
    for (int op : ops) {
      const OpResult& o = r.ops[op];
      std::string share;
      if (op == ops.front()) {
        for (size_t i = 0; i < r.path_ios.size(); ++i) {
          absl::StrAppendFormat(&share, "%s%.1f%%", i ? " / " : "",
                                Share(r, i));
        }
        if (r.failovers > 0) {
          absl::StrAppend(&share, "  (", r.failovers, " failovers)");
        }
      }
      absl::StrAppendFormat(&out,
                            "%-12s %-5s %9.1f %9.0f %9.2f %9.2f %9.2f  %s\n",
                            policy::PolicyName(r.policy), kOpNames[op], o.mib_s,
                            o.iops, o.p50_ms, o.p99_ms, o.p999_ms, share);
    }
  }
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

std::string FormatJson(const Scenario& sc, uint64_t seed,
                       const std::vector<PolicyResult>& results) {
  nlohmann::ordered_json j;
  j["scenario"] = sc.name;
  j["description"] = sc.description;
  j["seed"] = seed;
  j["duration_seconds"] = sc.duration_ns / 1e9;
  j["results"] = nlohmann::ordered_json::array();
  for (const PolicyResult& r : results) {
    nlohmann::ordered_json pr;
    pr["policy"] = std::string(policy::PolicyName(r.policy));
    for (int op : Ops(results)) {
      const OpResult& o = r.ops[op];
      pr["ops"][std::string(kOpNames[op])] = {
          {"mib_s", o.mib_s},   {"iops", o.iops},     {"ios", o.ios},
          {"p50_ms", o.p50_ms}, {"p99_ms", o.p99_ms}, {"p999_ms", o.p999_ms}};
    }
    for (size_t i = 0; i < r.path_ios.size(); ++i) {
      pr["paths"][sc.paths[i].name] = {{"ios", r.path_ios[i]},
                                       {"share_percent", Share(r, i)}};
    }
    pr["failovers"] = r.failovers;
    j["results"].push_back(std::move(pr));
  }
  // Names come from the scenario file, which need not be UTF-8: each
  // invalid sequence becomes U+FFFD where nlohmann::json would throw.
  return j.dump(2, ' ', /*ensure_ascii=*/false,
                nlohmann::ordered_json::error_handler_t::replace) +
         "\n";
}

}  // namespace pathwise::lab

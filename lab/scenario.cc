// SPDX-License-Identifier: Apache-2.0
#include "lab/scenario.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "lab/scenario_event.h"

namespace pathwise::lab {

double LinkRate(const PathSpec& spec, bool read) {
  const double d = read ? spec.read_bandwidth : spec.write_bandwidth;
  return d >= 0 ? d : spec.bandwidth;
}

namespace {

class Parser {
 public:
  explicit Parser(absl::string_view file) : file_(file) {}

  absl::StatusOr<Scenario> Run(absl::string_view text) {
    int lineno = 0;
    for (absl::string_view raw : absl::StrSplit(text, '\n')) {
      line_ = ++lineno;
      absl::string_view line = raw;
      if (size_t hash = line.find('#'); hash != absl::string_view::npos) {
        line = line.substr(0, hash);
      }
      line = absl::StripAsciiWhitespace(line);
      if (line.empty()) continue;
      absl::Status s = line.front() == '[' ? Section(line) : Entry(line);
      if (!s.ok()) return Error(s.message());
    }
    // The last line, not the empty piece after a final newline.
    line_ = std::max(1, lineno - (!text.empty() && text.back() == '\n'));
    if (sc_.paths.empty()) return Error("no [path NAME] section");
    if (absl::Status s = CheckRunnable(); !s.ok()) return s;
    // Resolve event path names now that every path is known.
    for (size_t i = 0; i < pending_.size(); ++i) {
      auto it = std::find_if(
          sc_.paths.begin(), sc_.paths.end(),
          [&](const PathSpec& p) { return p.name == pending_[i].path_name; });
      line_ = pending_[i].line;
      if (it == sc_.paths.end()) {
        return Error(absl::StrCat("event names unknown path '",
                                  pending_[i].path_name, "'"));
      }
      pending_[i].event.path = static_cast<int>(it - sc_.paths.begin());
      sc_.events.push_back(pending_[i].event);
    }
    std::stable_sort(
        sc_.events.begin(), sc_.events.end(),
        [](const Event& a, const Event& b) { return a.at_ns < b.at_ns; });
    return sc_;
  }

 private:
  struct PendingEvent {
    Event event;
    std::string path_name;
    int line;
  };

  absl::Status Error(absl::string_view message) const {
    return absl::InvalidArgumentError(
        absl::StrCat(file_, ":", line_, ": ", message));
  }
  absl::Status ErrorAt(int line, absl::string_view message) {
    line_ = line;
    return Error(message);
  }

  // What each value's own check cannot see: combinations the simulator
  // cannot run, reported at the line that completed them.
  absl::Status CheckRunnable() {
    const Workload& w = sc_.workload;
    const int64_t outstanding = int64_t{w.numjobs} * w.iodepth;
    if (outstanding > kMaxOutstandingIos) {
      return ErrorAt(
          std::max(numjobs_line_, iodepth_line_),
          absl::StrCat("numjobs x iodepth = ", outstanding, ": at most ",
                       kMaxOutstandingIos, " outstanding I/Os"));
    }
    if (sc_.tcp.rto_max_ns < sc_.tcp.rto_min_ns) {
      return ErrorAt(std::max(rto_line_, 1),
                     absl::StrCat("rto_max (", sc_.tcp.rto_max_ns / 1e9,
                                  "s) is below rto_min (",
                                  sc_.tcp.rto_min_ns / 1e9, "s)"));
    }
    int64_t servers = 0;
    for (size_t i = 0; i < sc_.paths.size(); ++i) {
      const PathSpec& p = sc_.paths[i];
      // Each I/O on a path advances simulated time by its service, round
      // trip and jitter, or by its transfer on a limited link; without any
      // of them every completion would come at the instant of its
      // submission and the clock would never reach the end.
      // A write_service of 0 stops it for writes alone, and a link limited
      // in one direction moves only that direction's I/Os.
      const bool no_delay = p.latency_ns == 0 && p.spread_ns == 0;
      const bool reads_stop =
          no_delay && p.service_ns == 0 && LinkRate(p, /*read=*/true) == 0;
      const int64_t write_service =
          p.write_service_ns >= 0 ? p.write_service_ns : p.service_ns;
      const bool writes_stop =
          no_delay && write_service == 0 && LinkRate(p, /*read=*/false) == 0;
      if (reads_stop || writes_stop) {
        return ErrorAt(
            path_lines_[i],
            absl::StrCat("path '", p.name, "' takes no time",
                         reads_stop ? "" : " for a write", ": latency, ",
                         reads_stop ? "service" : "write_service",
                         " and spread are 0 and its ",
                         reads_stop ? "read" : "write",
                         " bandwidth is unlimited, so simulated time would "
                         "stop (give it a latency)"));
      }
      servers += p.parallelism;
      if (servers > kMaxServers) {
        return ErrorAt(path_lines_[i],
                       absl::StrCat("parallelism summed over the paths is ",
                                    servers, ": at most ", kMaxServers));
      }
    }
    return absl::OkStatus();
  }

  absl::Status Section(absl::string_view line) {
    if (line.back() != ']') return absl::InvalidArgumentError("missing ']'");
    std::vector<std::string> words = absl::StrSplit(
        line.substr(1, line.size() - 2), ' ', absl::SkipWhitespace());
    if (words.empty()) return absl::InvalidArgumentError("empty section");
    section_ = words[0];
    if (section_ == "path") {
      if (words.size() != 2) {
        return absl::InvalidArgumentError("want [path NAME]");
      }
      for (const PathSpec& p : sc_.paths) {
        if (p.name == words[1]) {
          return absl::InvalidArgumentError(
              absl::StrCat("path '", words[1], "' defined twice"));
        }
      }
      if (sc_.paths.size() >= static_cast<size_t>(kMaxPaths)) {
        return absl::InvalidArgumentError(
            absl::StrCat("more than ", kMaxPaths, " paths"));
      }
      sc_.paths.push_back(PathSpec{.name = words[1]});
      path_lines_.push_back(line_);
      return absl::OkStatus();
    }
    if (section_ == "policy") {
      if (words.size() != 2 || (words[1] != "latency" &&
                                words[1] != "pathwise" && words[1] != "hst")) {
        return absl::InvalidArgumentError(
            "want [policy latency], [policy pathwise] or [policy hst]");
      }
      section_ = "policy " + words[1];
      return absl::OkStatus();
    }
    if (words.size() != 1 ||
        (section_ != "scenario" && section_ != "workload" &&
         section_ != "tcp" && section_ != "events")) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown section '", line,
          "' (want [scenario], [workload], [tcp], [path NAME], [events] or "
          "[policy NAME])"));
    }
    return absl::OkStatus();
  }

  template <typename T>
  static absl::Status Set(absl::StatusOr<T> v, T* out) {
    if (!v.ok()) return v.status();
    *out = *v;
    return absl::OkStatus();
  }
  static absl::Status SetInt(absl::string_view v, int64_t lo, int64_t hi,
                             int* out) {
    absl::StatusOr<int64_t> i = ParseInt(v, lo, hi);
    if (!i.ok()) return i.status();
    *out = static_cast<int>(*i);
    return absl::OkStatus();
  }

  absl::Status Entry(absl::string_view line) {
    if (section_.empty()) {
      return absl::InvalidArgumentError("entry before any [section]");
    }
    if (section_ == "events") return EventLine(line);
    size_t eq = line.find('=');
    if (eq == absl::string_view::npos) {
      return absl::InvalidArgumentError("want KEY = VALUE");
    }
    const std::string key(absl::StripAsciiWhitespace(line.substr(0, eq)));
    const absl::string_view v = absl::StripAsciiWhitespace(line.substr(eq + 1));
    if (v.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("empty value for ", key));
    }
    absl::Status s = Key(key, v);
    if (s.code() == absl::StatusCode::kNotFound) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown key '", key, "' in [", section_, "]"));
    }
    if (!s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(key, ": ", s.message()));
    }
    return absl::OkStatus();
  }

  // A key of the current section; NotFound for one it does not have.
  absl::Status Key(const std::string& key, absl::string_view v) {
    if (section_ == "scenario") return ScenarioKey(key, v);
    if (section_ == "workload") return WorkloadKey(key, v);
    if (section_ == "tcp") return TcpKey(key, v);
    if (section_ == "path") return PathKey(key, v);
    if (section_ == "policy latency" || section_ == "policy pathwise") {
      return PolicyKey(key, v);
    }
    if (section_ == "policy hst" && key == "ewma_shift") {
      return SetInt(v, 0, 16, &sc_.hst.ewma_shift);
    }
    return absl::NotFoundError(key);
  }

  // [scenario]
  absl::Status ScenarioKey(const std::string& key, absl::string_view v) {
    if (key == "name") return sc_.name = std::string(v), absl::OkStatus();
    if (key == "description") {
      if (!sc_.description.empty()) sc_.description += " ";
      sc_.description += std::string(v);
      return absl::OkStatus();
    }
    if (key == "duration") {
      absl::Status s = Set(ParseDuration(v), &sc_.duration_ns);
      if (s.ok() && sc_.duration_ns <= 0) {
        return absl::InvalidArgumentError("must be > 0");
      }
      return s;
    }
    if (key == "seed") {
      uint64_t seed;
      if (!absl::SimpleAtoi(v, &seed)) return BadValue("seed", v);
      sc_.seed = seed;
      return absl::OkStatus();
    }
    return absl::NotFoundError(key);
  }

  // [workload]
  absl::Status WorkloadKey(const std::string& key, absl::string_view v) {
    Workload& w = sc_.workload;
    if (key == "numjobs") {
      numjobs_line_ = line_;
      return SetInt(v, 1, 4096, &w.numjobs);
    }
    if (key == "iodepth") {
      iodepth_line_ = line_;
      return SetInt(v, 1, 65536, &w.iodepth);
    }
    if (key == "cpus") return SetInt(v, 1, 4096, &w.cpus);
    if (key == "cpu_per_io") return Set(ParseDuration(v), &w.cpu_per_io_ns);
    if (key == "host_latency") {
      return Set(ParseDuration(v), &w.host_latency_ns);
    }
    if (key == "numa_node") return SetInt(v, 0, 1023, &w.numa_node);
    if (key == "bs") {
      absl::StatusOr<uint64_t> bs = ParseSize(v);
      if (!bs.ok()) return bs.status();
      if (*bs > (64u << 20)) return BadValue("bs (at most 64M)", v);
      w.bs = static_cast<uint32_t>(*bs);
      return absl::OkStatus();
    }
    if (key == "read") return Set(ParseFraction(v), &w.read_fraction);
    return absl::NotFoundError(key);
  }

  // [tcp]
  absl::Status TcpKey(const std::string& key, absl::string_view v) {
    if (key == "rto_min" || key == "rto_max") {
      rto_line_ = line_;
      return Set(ParseDuration(v),
                 key == "rto_min" ? &sc_.tcp.rto_min_ns : &sc_.tcp.rto_max_ns);
    }
    if (key == "dupthresh") return SetInt(v, 1, 1000, &sc_.tcp.dupthresh);
    if (key == "congestion") {
      if (v == "cubic" || v == "reno") {
        sc_.tcp.congestion = v == "cubic" ? TcpModel::Congestion::kCubic
                                          : TcpModel::Congestion::kReno;
        return absl::OkStatus();
      }
      return BadValue("congestion control (cubic or reno)", v);
    }
    if (key == "window") {
      absl::StatusOr<uint64_t> window = ParseSize(v);
      if (!window.ok()) return window.status();
      if (*window < 1024 || *window > (uint64_t{1} << 30)) {
        return BadValue("window (1k to 1024M)", v);
      }
      sc_.tcp.window_bytes = static_cast<int64_t>(*window);
      return absl::OkStatus();
    }
    if (key == "tlp") {
      if (v == "on" || v == "off") {
        sc_.tcp.tlp = v == "on";
        return absl::OkStatus();
      }
      return BadValue("tail loss probe (on or off)", v);
    }
    return absl::NotFoundError(key);
  }

  // [path NAME]: the last path's
  absl::Status PathKey(const std::string& key, absl::string_view v) {
    PathSpec& p = sc_.paths.back();
    if (key == "latency") return Set(ParseDuration(v), &p.latency_ns);
    if (key == "spread") return Set(ParseDuration(v), &p.spread_ns);
    if (key == "service") return Set(ParseDuration(v), &p.service_ns);
    if (key == "write_service") {
      return Set(ParseDuration(v), &p.write_service_ns);
    }
    if (key == "parallelism") return SetInt(v, 0, 1 << 20, &p.parallelism);
    if (key == "bandwidth") return Set(ParseBandwidth(v), &p.bandwidth);
    if (key == "read_bandwidth") {
      return Set(ParseBandwidth(v), &p.read_bandwidth);
    }
    if (key == "write_bandwidth") {
      return Set(ParseBandwidth(v), &p.write_bandwidth);
    }
    if (key == "queues") return SetInt(v, 0, 4096, &p.queues);
    if (key == "mss") return SetInt(v, 64, 65536, &p.mss);
    if (key == "numa_node") return SetInt(v, -1, 1023, &p.numa_node);
    if (key == "ana") {
      if (!ParseAna(v, &p.ana)) return BadValue("ANA state", v);
      return absl::OkStatus();
    }
    return absl::NotFoundError(key);
  }

  // [policy latency] and [policy pathwise]
  absl::Status PolicyKey(const std::string& key, absl::string_view v) {
    int64_t* window = section_ == "policy latency" ? &sc_.latency.window_ns
                                                   : &sc_.pathwise.window_ns;
    int* shift = section_ == "policy latency" ? &sc_.latency.ewma_shift
                                              : &sc_.pathwise.ewma_shift;
    if (key == "window") {
      absl::Status s = Set(ParseDuration(v), window);
      if (s.ok() && *window < 1000) {
        return absl::InvalidArgumentError("must be >= 1us");
      }
      return s;
    }
    if (key == "ewma_shift") return SetInt(v, 0, 16, shift);
    return absl::NotFoundError(key);
  }

  // TIME PATH ACTION [VALUE] (ParseEventLine); the path is resolved once
  // every path is known.
  absl::Status EventLine(absl::string_view line) {
    PendingEvent pe{.line = line_};
    if (absl::Status s = ParseEventLine(line, &pe.path_name, &pe.event);
        !s.ok()) {
      return s;
    }
    pending_.push_back(std::move(pe));
    return absl::OkStatus();
  }

  std::string file_;
  int line_ = 0;
  std::string section_;
  Scenario sc_;
  std::vector<PendingEvent> pending_;
  // Where CheckRunnable's subjects were set (0: not in the file).
  std::vector<int> path_lines_;  // of each [path NAME]
  int numjobs_line_ = 0, iodepth_line_ = 0, rto_line_ = 0;
};

}  // namespace

absl::StatusOr<Scenario> ParseScenario(absl::string_view text,
                                       absl::string_view file) {
  return Parser(file).Run(text);
}

absl::StatusOr<Scenario> LoadScenario(const std::string& path) {
  // A directory opens, and then reads as an error or as nothing.
  if (std::error_code ec; std::filesystem::is_directory(path, ec)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": is a directory"));
  }
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  }
  std::stringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat(path, ": read error"));
  return ParseScenario(buf.str(), path);
}

}  // namespace pathwise::lab

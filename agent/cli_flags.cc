#include "agent/cli_flags.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <optional>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "agent/listen_address.h"
#include "exporters/http_server.h"
#include "ui/source.h"
#include "ui/top.h"

namespace pathwise::agent {
namespace {

// Parses a flag's text into `*value`; returns "" or what is wrong with the
// text ("must be positive"), which becomes
// `invalid value "TEXT" for --NAME: PROBLEM`.
template <typename T>
using ParseFn = std::function<std::string(absl::string_view text, T* value)>;

// Adds --NAME, which takes a value parsed by `parse` into `*out`. CLI11
// checks the text first (so a bad value is a usage error before anything is
// stored), then the option's callback stores it. Every option is a string to
// CLI11: the conversions are pathwise's, with pathwise's messages.
template <typename T>
CLI::Option* AddValue(CLI::App& app, const std::string& name, T* out,
                      ParseFn<T> parse, const std::string& type,
                      const std::string& def, const std::string& help) {
  CLI::Validator check(
      [name, parse](std::string& text) {
        T value{};
        std::string problem = parse(text, &value);
        if (problem.empty()) return problem;
        return absl::StrCat("invalid value \"", text, "\" for --", name, ": ",
                            problem);
      },
      "");
  return app
      .add_option_function<std::string>(
          "--" + name,
          [out, parse](const std::string& text) { parse(text, out); }, help)
      ->type_name(type)
      ->default_str(def)
      ->check(check);
}

std::string ParseInt(absl::string_view text, int* v, int lo, int hi,
                     absl::string_view range) {
  if (!absl::SimpleAtoi(text, v)) return "want an integer";
  return *v >= lo && *v <= hi ? "" : std::string(range);
}

std::string ParseDouble(absl::string_view text, double* v) {
  return absl::SimpleAtod(text, v) ? "" : "want a number";
}

std::string ParseDurationFlag(absl::string_view text, absl::Duration* d) {
  return absl::ParseDuration(text, d)
             ? ""
             : "want a duration such as 1s, 500ms or 1m30s";
}

// One of `values` (as spelled), else `want`.
std::string ParseEnum(absl::string_view text, std::string* v,
                      std::initializer_list<absl::string_view> values,
                      absl::string_view want) {
  if (std::find(values.begin(), values.end(), text) == values.end()) {
    return std::string(want);
  }
  *v = std::string(text);
  return "";
}

std::string ParseBpfMode(absl::string_view text, BpfMode* mode) {
  if (text == "auto") {
    *mode = BpfMode::kAuto;
  } else if (text == "required") {
    *mode = BpfMode::kRequired;
  } else if (text == "off") {
    *mode = BpfMode::kOff;
  } else {
    return "want auto, required or off";
  }
  return "";
}

std::string NonEmpty(absl::string_view text, std::string* v) {
  *v = std::string(text);
  return text.empty() ? "must not be empty" : "";
}

void AddInterval(CLI::App& app, Options* o) {
  AddValue<absl::Duration>(
      app, "interval", &o->interval,
      [](absl::string_view t, absl::Duration* d) {
        std::string p = ParseDurationFlag(t, d);
        return !p.empty() || *d > absl::ZeroDuration() ? p : "must be positive";
      },
      "DURATION", "1s",
      "Collection period: the topology is rescanned and the statistics "
      "re-read this often.");
}

void AddSysfsRoot(CLI::App& app, Options* o) {
  AddValue<std::string>(
      app, "sysfs_root", &o->sysfs_root, NonEmpty, "DIR", o->sysfs_root,
      "Where sysfs is mounted. Anything but /sys is bound over /sys in a "
      "private mount namespace so libnvme sees it too (needs "
      "CAP_SYS_ADMIN).");
}

void AddLogLevel(CLI::App& app, Options* o) {
  AddValue<std::string>(
      app, "log_level", &o->log_level,
      [](absl::string_view t, std::string* v) {
        return ParseEnum(t, v, {"debug", "info", "warn", "error"},
                         "want debug, info, warn or error");
      },
      "LEVEL", o->log_level,
      "Log level: debug, info, warn or error. Logs go to stderr.");
}

// --format of `command` (snapshot or topology): `first` is the default.
void AddFormat(CLI::App& app, Options* o, absl::string_view command,
               absl::string_view first, absl::string_view second) {
  const std::string want =
      absl::StrCat(command, " wants ", first, " or ", second);
  AddValue<std::string>(
      app, "format", &o->format,
      [=](absl::string_view t, std::string* v) {
        return ParseEnum(t, v, {first, second}, want);
      },
      absl::StrCat(first, "|", second), std::string(first),
      absl::StrCat("Output format: ", first, " or ", second, "."));
}

// The path scoring flags, scoring::Config's tunables.
void AddScoring(CLI::App& app, scoring::Config* c) {
  auto at_least_one = [](absl::string_view t, int* v) {
    return ParseInt(t, v, 1, INT_MAX, "must be >= 1");
  };
  AddValue<int>(
      app, "ewma_shift", &c->ewma_shift,
      [](absl::string_view t, int* v) {
        return ParseInt(t, v, 0, 16, "want 0 to 16");
      },
      "0..16", std::to_string(c->ewma_shift),
      "Path scoring: latency EWMA weight; each window's mean counts "
      "1/2^shift (3: 1/8 new, 7/8 old, as the kernel's latency iopolicy).");
  AddValue<double>(
      app, "degraded_ratio", &c->degraded_ratio,
      [](absl::string_view t, double* v) {
        std::string p = ParseDouble(t, v);
        // `!(x > 1)` also rejects NaN.
        if (p.empty() && (!(*v > 1) || std::isinf(*v))) {
          p = "must be a number above 1";
        }
        return p;
      },
      "RATIO", absl::StrCat(c->degraded_ratio),
      "Path scoring: a path whose latency EWMA is at least this many times "
      "the best usable sibling's (for --degraded_windows windows) is "
      "degraded; > 1.");
  AddValue<int>(app, "degraded_windows", &c->degraded_windows, at_least_one,
                "N", std::to_string(c->degraded_windows),
                "Path scoring: consecutive windows over --degraded_ratio "
                "before a path is degraded; >= 1.");
  AddValue<int>(app, "idle_windows", &c->idle_windows, at_least_one, "N",
                std::to_string(c->idle_windows),
                "Path scoring: windows without a completed I/O before a path "
                "is idle; >= 1.");
  AddValue<int>(app, "recover_windows", &c->recover_windows, at_least_one, "N",
                std::to_string(c->recover_windows),
                "Path scoring: consecutive clean windows before a degraded or "
                "failed path is healthy again; >= 1.");
  AddValue<double>(
      app, "reseed_ratio", &c->reseed_ratio,
      [](absl::string_view t, double* v) {
        std::string p = ParseDouble(t, v);
        if (p.empty() && *v != 0 && (!(*v > 1) || std::isinf(*v))) {
          p = "want 0 (off) or above 1";
        }
        return p;
      },
      "RATIO", absl::StrCat(c->reseed_ratio),
      "Path scoring: a window whose mean latency differs from the EWMA by "
      "this factor or more (over >= 16 I/Os) is a step: up, the EWMA takes "
      "it at once; down, once the next window confirms it; an unconfirmed "
      "step falls back to the plain EWMA. 0 turns this off (the kernel's "
      "plain EWMA), else > 1.");
}

// The iopolicy actuator's flags and --kernel_queue_depth, which the advisor
// and the actuator both follow.
void AddKernelQueueDepth(CLI::App& app, Options* o) {
  AddValue<std::optional<bool>>(
      app, "kernel_queue_depth", &o->kernel_queue_depth,
      [](absl::string_view t, std::optional<bool>* v) -> std::string {
        if (t == "auto") {
          *v = std::nullopt;
        } else if (t == "true" || t == "false") {
          *v = t == "true";
        } else {
          return "want auto, true or false";
        }
        return "";
      },
      "auto|true|false", "auto",
      "Whether the kernel has the queue-depth iopolicy: auto (by its "
      "release, Linux >= 6.11), true (e.g. a distribution kernel that "
      "backported it) or false. The iopolicy advisor recommends "
      "round-robin instead of queue-depth without it.");
}

std::string ParseActuateMode(absl::string_view text, model::ActuateMode* m) {
  if (text == "off") {
    *m = model::ActuateMode::kOff;
  } else if (text == "dry-run") {
    *m = model::ActuateMode::kDryRun;
  } else if (text == "on") {
    *m = model::ActuateMode::kOn;
  } else {
    return "want off, dry-run or on";
  }
  return "";
}

void AddActuate(CLI::App& app, Options* o) {
  control::IopolicyActuatorConfig& c = o->actuate;
  AddValue<model::ActuateMode>(
      app, "actuate", &c.mode, ParseActuateMode, "off|dry-run|on", "off",
      "Iopolicy actuator: off, dry-run (decide, log and export what it would "
      "write, write nothing) or on (write the advised iopolicy to "
      "/sys/class/nvme-subsystem/*/iopolicy, read it back; needs write "
      "access there).");
  auto duration = [](absl::string_view t, absl::Duration* d) {
    std::string p = ParseDurationFlag(t, d);
    return !p.empty() || *d >= absl::ZeroDuration() ? p
                                                    : "must not be negative";
  };
  AddValue<absl::Duration>(
      app, "actuate_hold", &c.hold, duration, "DURATION",
      absl::FormatDuration(c.hold),
      "Iopolicy actuator: how long the advisor must keep recommending a "
      "policy before it is applied.");
  AddValue<absl::Duration>(
      app, "actuate_min_interval", &c.min_interval, duration, "DURATION",
      absl::FormatDuration(c.min_interval),
      "Iopolicy actuator: at most one change (or failed attempt) per "
      "subsystem per this interval.");
  AddValue<std::string>(
      app, "actuate_subsystems", &c.subsystems,
      [](absl::string_view t, std::string* v) {
        *v = std::string(t);
        return control::SubsystemRegexProblem(*v).empty()
                   ? ""
                   : "not a regular expression (ECMAScript)";
      },
      "REGEX", c.subsystems,
      "Iopolicy actuator: only subsystems whose whole name (nvme-subsys0) or "
      "whole NQN matches this regular expression are changed.");
  app.add_flag("--actuate_restore", c.restore,
               "Iopolicy actuator: on exit (SIGTERM, SIGINT), set each "
               "subsystem pathwise changed back to the policy it found; "
               "--actuate_restore=false leaves the last one.")
      ->default_str("true")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            if (text == "true" || text == "false") return "";
            return absl::StrCat("invalid value \"", text,
                                "\" for --actuate_restore: want true or false");
          },
          ""));
}

// What serve and snapshot share: collection and scoring.
void AddCollection(CLI::App& app, Options* o) {
  AddInterval(app, o);
  AddSysfsRoot(app, o);
  AddValue<BpfMode>(
      app, "bpf", &o->bpf, ParseBpfMode, "auto|required|off", "auto",
      "eBPF sampler: auto (use it when the kernel allows, else sysfs "
      "counters), required (fail without it), off (sysfs counters only).");
  // A bool flag: bare, or =true/=false.
  app.add_flag("--bpf_stats", o->bpf_stats,
               "Turn on the kernel's BPF program run-time statistics "
               "(kernel.bpf_stats_enabled, via a BPF_ENABLE_STATS fd held "
               "while pathwise runs) to export "
               "pathwise_bpf_program_run_seconds_total and _runs_total. This "
               "costs: two clock reads per run of every BPF program on the "
               "host, not only pathwise's.")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            if (text == "true" || text == "false") return "";
            return absl::StrCat("invalid value \"", text,
                                "\" for --bpf_stats: want true or false");
          },
          ""));
  AddValue<std::string>(
      app, "devices", &o->devices,
      [](absl::string_view t, std::string* v) {
        return ParseEnum(t, v, {"nvme", "all"}, "want nvme or all");
      },
      "nvme|all", o->devices,
      "Which block devices the eBPF sampler exports: nvme (NVMe paths and "
      "heads) or all (also every other disk, e.g. loop or sd, as "
      "pathwise_device_io_*{device}).");
  AddScoring(app, &o->scoring);
  AddKernelQueueDepth(app, o);
}

// Controller probes: --probe_interval and --probe_timeout.
void AddProbes(CLI::App& app, Options* o) {
  AddValue<absl::Duration>(
      app, "probe_interval", &o->probe_interval,
      [](absl::string_view t, absl::Duration* d) {
        std::string p = ParseDurationFlag(t, d);
        return !p.empty() || *d >= absl::ZeroDuration()
                   ? p
                   : "must not be negative";
      },
      "DURATION", "1s",
      "Controller probes: every this often, one NVMe Identify Controller "
      "admin command per controller through io_uring on /dev/nvmeX, timed "
      "(pathwise_controller_probe_*); an idle path is scored from its "
      "controller's probes and an unreachable controller's paths are failed. "
      "0 turns probes off. Off with a --sysfs_root other than /sys.");
  AddValue<absl::Duration>(
      app, "probe_timeout", &o->probe_timeout,
      [](absl::string_view t, absl::Duration* d) {
        std::string p = ParseDurationFlag(t, d);
        return !p.empty() || *d > absl::ZeroDuration() ? p : "must be positive";
      },
      "DURATION", "2s",
      "Controller probes: a probe without a completion after this long "
      "fails (reason timeout); the controller gets no new probe until the "
      "kernel completes that one.");
}

void AddHistogramBuckets(CLI::App& app, Options* o) {
  AddValue<exporters::HistogramBuckets>(
      app, "histogram_buckets", &o->histogram_buckets,
      [](absl::string_view t, exporters::HistogramBuckets* b) {
        if (t != "coarse" && t != "fine") return "want coarse or fine";
        *b = t == "coarse" ? exporters::HistogramBuckets::kCoarse
                           : exporters::HistogramBuckets::kFine;
        return "";
      },
      "coarse|fine", "coarse",
      "Classic buckets of the latency histograms in the text exposition: "
      "coarse (25: le = 2^k ns, 4.096us to 34.36s, and +Inf) or fine (the "
      "kernel's 106). A scraper asking for protobuf gets native histograms "
      "either way.");
}

}  // namespace

void AddServeFlags(CLI::App& app, Options* o) {
  AddValue<std::string>(
      app, "listen_address", &o->listen_address, ParseListenAddress,
      "[HOST]:PORT", o->listen_address,
      "Address to serve HTTP on, [host]:port (e.g. :9877, 127.0.0.1:9877); "
      "IPv4 only.");
  AddValue<std::string>(
      app, "web.config.file", &o->web_config_file, NonEmpty, "FILE", "",
      "TLS and basic authentication for the endpoint: a YAML file in the "
      "Prometheus exporter-toolkit format (tls_server_config, "
      "basic_auth_users), read once at start. A bad file exits 2.");
  AddValue<int>(
      app, "web.max_connections_per_client", &o->web_max_connections_per_client,
      [](absl::string_view t, int* v) {
        return ParseInt(t, v, 0, 1024, "want 0 (no limit) to 1024");
      },
      "N", std::to_string(o->web_max_connections_per_client),
      "HTTP connections one client address may hold at once; more are "
      "answered 503 and closed unread (counted in "
      "pathwise_http_connections_refused_total). 0: no limit.");
  AddCollection(app, o);
  AddHistogramBuckets(app, o);
  AddActuate(app, o);
  AddProbes(app, o);
  AddLogLevel(app, o);
}

void AddSnapshotFlags(CLI::App& app, Options* o) {
  AddValue<absl::Duration>(
      app, "duration", &o->duration,
      [](absl::string_view t, absl::Duration* d) {
        std::string p = ParseDurationFlag(t, d);
        return !p.empty() || *d >= absl::ZeroDuration()
                   ? p
                   : "must not be negative";
      },
      "DURATION", "2s", "How long to collect before printing.");
  AddFormat(app, o, "snapshot", "prometheus", "json");
  AddCollection(app, o);
  AddHistogramBuckets(app, o);
  AddLogLevel(app, o);
}

void AddTopologyFlags(CLI::App& app, Options* o) {
  AddFormat(app, o, "topology", "text", "json");
  AddSysfsRoot(app, o);
  AddLogLevel(app, o);
}

// `pathwise top`: where to read (--url, else local sampling with
// --sysfs_root and --bpf), how often, and what to show first.
void AddTopFlags(CLI::App& app, Options* o) {
  ui::TopOptions& t = o->top;
  AddValue<std::string>(
      app, "url", &t.url,
      [](absl::string_view text, std::string* v) -> std::string {
        absl::StatusOr<std::string> url = ui::SnapshotUrl(text);
        if (!url.ok()) return "want http://HOST[:PORT] or https://HOST[:PORT]";
        *v = std::string(text);
        return "";
      },
      "URL", t.url,
      "The agent to read (its /api/v1/snapshot); credentials for basic "
      "auth go in it (https://USER:PASSWORD@HOST:PORT). Without --url and "
      "with no agent answering at the default, top samples by itself, as "
      "`snapshot` does (root for the eBPF sampler).");
  AddValue<absl::Duration>(
      app, "interval", &o->interval,
      [](absl::string_view t, absl::Duration* d) {
        std::string p = ParseDurationFlag(t, d);
        return !p.empty() || *d > absl::ZeroDuration() ? p : "must be positive";
      },
      "DURATION", "1s",
      "Refresh: one frame this often, its rates over the agent's last "
      "interval (local sampling collects this often).");
  app.add_flag("--once", t.once,
               "Print one frame (the rates over one --interval) and exit.");
  AddFormat(app, o, "top", "text", "json");
  AddValue<ui::SortKey>(
      app, "sort", &t.sort,
      [](absl::string_view text, ui::SortKey* k) -> std::string {
        std::optional<ui::SortKey> key = ui::ParseSortKey(text);
        if (!key)
          return "want name, health, riops, wiops, rp99, wp99, ewma or errors";
        *k = *key;
        return "";
      },
      "KEY", "name",
      "Sort the table by name (grouped by head), health (worst first), "
      "riops, wiops, rp99, wp99, ewma (highest first) or errors.");
  AddValue<std::string>(
      app, "filter", &t.filter,
      [](absl::string_view text, std::string* v) {
        *v = std::string(text);
        return std::string();
      },
      "TEXT", "",
      "Show only paths (controllers, devices) whose name, head, controller, "
      "subsystem or address contains TEXT.");
  AddValue<ui::View>(
      app, "view", &t.view,
      [](absl::string_view text, ui::View* v) -> std::string {
        std::optional<ui::View> view = ui::ParseView(text);
        if (!view) return "want paths, controllers or devices";
        *v = *view;
        return "";
      },
      "paths|controllers|devices", "paths", "The table to show first.");
  AddValue<int>(
      app, "width", &t.width,
      [](absl::string_view text, int* v) {
        return ParseInt(text, v, 0, 100000, "must be >= 0");
      },
      "COLUMNS", "0",
      "--once: fit the text in this many columns, hiding the least "
      "important columns first; 0: the terminal's width, no limit when "
      "stdout is not a terminal.");
  AddSysfsRoot(app, o);
  AddValue<BpfMode>(app, "bpf", &o->bpf, ParseBpfMode, "auto|required|off",
                    "auto",
                    "Local sampling only: the eBPF sampler (auto, required) or "
                    "sysfs counters (off).");
  AddLogLevel(app, o);
}

}  // namespace pathwise::agent

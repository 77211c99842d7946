// SPDX-License-Identifier: Apache-2.0
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
#include "agent/flag_values.h"
#include "agent/listen_address.h"
#include "exporters/http_server.h"

namespace pathwise::agent {
namespace {

// The path scoring flags, scoring::Config's tunables.
void AddScoring(CLI::App& app, scoring::Config* c) {
  auto at_least_one = [](absl::string_view t, int* v) {
    return ParseInt(t, v, 1, INT_MAX, "must be >= 1");
  };
  AddValue<int>(
      app, "ewma-shift", &c->ewma_shift,
      [](absl::string_view t, int* v) {
        return ParseInt(t, v, 0, 16, "want 0 to 16");
      },
      "0..16", std::to_string(c->ewma_shift),
      "Path scoring: latency EWMA weight; each window's mean counts "
      "1/2^shift (3: 1/8 new, 7/8 old, as the kernel's latency iopolicy).");
  AddValue<double>(
      app, "degraded-ratio", &c->degraded_ratio,
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
      "the best usable sibling's (for --degraded-windows windows) is "
      "degraded; > 1.");
  AddValue<int>(app, "degraded-windows", &c->degraded_windows, at_least_one,
                "N", std::to_string(c->degraded_windows),
                "Path scoring: consecutive windows over --degraded-ratio "
                "before a path is degraded; >= 1.");
  AddValue<int>(app, "idle-windows", &c->idle_windows, at_least_one, "N",
                std::to_string(c->idle_windows),
                "Path scoring: windows without a completed I/O before a path "
                "is idle; >= 1.");
  AddValue<int>(app, "recover-windows", &c->recover_windows, at_least_one, "N",
                std::to_string(c->recover_windows),
                "Path scoring: consecutive clean windows before a degraded or "
                "failed path is healthy again; >= 1.");
  AddValue<double>(
      app, "reseed-ratio", &c->reseed_ratio,
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

// The iopolicy actuator's flags and --kernel-queue-depth, which the advisor
// and the actuator both follow.
void AddKernelQueueDepth(CLI::App& app, Options* o) {
  AddValue<std::optional<bool>>(
      app, "kernel-queue-depth", &o->kernel_queue_depth,
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
      app, "actuate-hold", &c.hold, duration, "DURATION",
      absl::FormatDuration(c.hold),
      "Iopolicy actuator: how long the advisor must keep recommending a "
      "policy before it is applied.");
  AddValue<absl::Duration>(
      app, "actuate-min-interval", &c.min_interval, duration, "DURATION",
      absl::FormatDuration(c.min_interval),
      "Iopolicy actuator: at most one change (or failed attempt) per "
      "subsystem per this interval.");
  AddValue<std::string>(
      app, "actuate-subsystems", &c.subsystems,
      [](absl::string_view t, std::string* v) {
        *v = std::string(t);
        return control::SubsystemRegexProblem(*v).empty()
                   ? ""
                   : "not a regular expression (ECMAScript)";
      },
      "REGEX", c.subsystems,
      "Iopolicy actuator: only subsystems whose whole name (nvme-subsys0) or "
      "whole NQN matches this regular expression are changed.");
  app.add_flag("--actuate-restore", c.restore,
               "Iopolicy actuator: on exit (SIGTERM, SIGINT), set each "
               "subsystem pathwise changed back to the policy it found; "
               "--actuate-restore=false leaves the last one.")
      ->default_str("true")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            if (text == "true" || text == "false") return "";
            return absl::StrCat("invalid value \"", text,
                                "\" for --actuate-restore: want true or false");
          },
          ""));
}

void AddHeadIostats(CLI::App& app, Options* o) {
  AddValue<model::HeadIostatsMode>(
      app, "head-iostats", &o->head_iostats,
      [](absl::string_view t, model::HeadIostatsMode* m) -> std::string {
        if (t == "keep") {
          *m = model::HeadIostatsMode::kKeep;
        } else if (t == "dry-run") {
          *m = model::HeadIostatsMode::kDryRun;
        } else if (t == "off") {
          *m = model::HeadIostatsMode::kOff;
        } else {
          return "want keep, dry-run or off";
        }
        return "";
      },
      "keep|dry-run|off", "keep",
      "The kernel's I/O accounting at each multipath head (queue/iostats), "
      "which counts every I/O a second time after its path: keep, dry-run "
      "(log what would be written) or off (0 while the eBPF sampler counts "
      "the heads' I/O, 1 again when it stops or falls back to sysfs and on "
      "exit; needs write access to /sys/block/*/queue/iostats). Off, the "
      "heads' /sys/block/*/stat and /proc/diskstats stop moving (iostat and "
      "node_exporter see them idle); pathwise's head series keep every "
      "I/O.");
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
  app.add_flag("--bpf-stats", o->bpf_stats,
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
                                "\" for --bpf-stats: want true or false");
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

// Controller probes: --probe-interval and --probe-timeout.
void AddProbes(CLI::App& app, Options* o) {
  AddValue<absl::Duration>(
      app, "probe-interval", &o->probe_interval,
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
      "0 turns probes off. Off with a --path.sysfs other than /sys.");
  AddValue<absl::Duration>(
      app, "probe-timeout", &o->probe_timeout,
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
  AddValue<std::optional<exporters::HistogramBuckets>>(
      app, "histogram-buckets", &o->histogram_buckets,
      [](absl::string_view t, std::optional<exporters::HistogramBuckets>* b) {
        if (t == "sparse") {
          *b = exporters::HistogramBuckets::kSparse;
        } else if (t == "coarse") {
          *b = exporters::HistogramBuckets::kCoarse;
        } else if (t == "fine") {
          *b = exporters::HistogramBuckets::kFine;
        } else {
          return "want sparse, coarse or fine";
        }
        return "";
      },
      "sparse|coarse|fine", "the profile's",
      "Classic buckets of the latency histograms in the text exposition: "
      "sparse (12: le = 8.192us to 268.4ms and +Inf; the default profile's), "
      "coarse (25: le = 2^k ns, 4.096us to 34.36s, and +Inf; the full "
      "profile's) or fine (the kernel's 106). A scraper asking for protobuf "
      "gets native histograms either way.");
  AddValue<exporters::MetricsProfile>(
      app, "metrics.profile", &o->metrics_profile,
      [](absl::string_view t, exporters::MetricsProfile* p) {
        if (t != "default" && t != "full") return "want default or full";
        *p = t == "default" ? exporters::MetricsProfile::kDefault
                            : exporters::MetricsProfile::kFull;
        return "";
      },
      "default|full", "default",
      "Which series /metrics carries. default: what a fleet can afford, "
      "<= 50 series for a path with reads and writes (no per-head I/O series "
      "but in-flight: "
      "sum the paths'; StateSets of paths as their current state only; an "
      "op's series once it has I/O; sparse histogram buckets for read, "
      "write and passthru). full: every series (docs/metrics.md, \"What "
      "earns a series by default\").");
}

}  // namespace

void AddServeFlags(CLI::App& app, Options* o) {
  AddValue<std::string>(
      app, "web.listen-address", &o->listen_address, ParseListenAddress,
      "[HOST]:PORT", o->listen_address,
      "Address to serve HTTP on, [host]:port: :9877 (every interface, IPv6 "
      "and IPv4), 127.0.0.1:9877, [::1]:9877, [::]:9877 (dual-stack).");
  AddAlias<std::string>(app, "listen_address", "web.listen-address",
                        &o->listen_address, ParseListenAddress,
                        &o->deprecated_flags);
  AddValue<std::string>(
      app, "web.config.file", &o->web_config_file, NonEmpty, "FILE", "",
      "TLS and basic authentication for the endpoint: a YAML file in the "
      "Prometheus exporter-toolkit format (tls_server_config, "
      "basic_auth_users), read once at start. A bad file exits 2.");
  AddValue<int>(
      app, "web.max-connections-per-client", &o->web_max_connections_per_client,
      [](absl::string_view t, int* v) {
        return ParseInt(t, v, 0, 1024, "want 0 (no limit) to 1024");
      },
      "N", std::to_string(o->web_max_connections_per_client),
      "HTTP connections one client address (an IPv6 /64) may hold at once; "
      "at the limit a new one closes that address's connection that has "
      "waited longest without a request in progress (counted in "
      "pathwise_http_connections_refused_total). 0: no limit.");
  AddValue<int>(
      app, "web.max-connections", &o->web_max_connections,
      [](absl::string_view t, int* v) {
        return ParseInt(t, v, 1, 65536, "want 1 to 65536");
      },
      "N", std::to_string(o->web_max_connections),
      "HTTP connections held at once, all clients; at the limit a new one "
      "closes a waiting connection of the address holding the most.");
  AddCollection(app, o);
  AddHistogramBuckets(app, o);
  AddActuate(app, o);
  AddHeadIostats(app, o);
  AddProbes(app, o);
  AddLogFlags(app, o);
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
  AddLogFlags(app, o);
}

void AddTopologyFlags(CLI::App& app, Options* o) {
  AddFormat(app, o, "topology", "text", "json");
  AddSysfsRoot(app, o);
  AddLogFlags(app, o);
}

}  // namespace pathwise::agent

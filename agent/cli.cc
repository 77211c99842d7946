#include "agent/cli.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

ABSL_FLAG(std::string, listen_address, ":9877",
          "Address to serve HTTP on, [host]:port (e.g. :9877, "
          "127.0.0.1:9877, [::1]:9877).");
ABSL_FLAG(absl::Duration, interval, absl::Seconds(1),
          "Collection period: the topology is rescanned and the statistics "
          "re-read this often.");
ABSL_FLAG(std::string, sysfs_root, "/sys",
          "Where sysfs is mounted. Anything but /sys is bound over /sys in a "
          "private mount namespace so libnvme sees it too (needs "
          "CAP_SYS_ADMIN).");
ABSL_FLAG(pathwise::agent::BpfMode, bpf, pathwise::agent::BpfMode::kAuto,
          "eBPF sampler: auto (use it when the kernel allows, else sysfs "
          "counters), required (fail without it), off (sysfs counters only).");
ABSL_FLAG(bool, bpf_stats, false,
          "Turn on the kernel's BPF program run-time statistics "
          "(kernel.bpf_stats_enabled, via a BPF_ENABLE_STATS fd held while "
          "pathwise runs) to export pathwise_bpf_program_run_seconds_total "
          "and _runs_total. This costs: two clock reads per run of every BPF "
          "program on the host, not only pathwise's.");
ABSL_FLAG(std::string, devices, "nvme",
          "Which block devices the eBPF sampler exports: nvme (NVMe paths "
          "and heads) or all (also every other disk, e.g. loop or sd, as "
          "pathwise_device_io_*{device}).");
ABSL_FLAG(absl::Duration, duration, absl::Seconds(2),
          "snapshot: how long to collect before printing.");
ABSL_FLAG(std::string, format, "",
          "Output format. snapshot: prometheus (default) or json; topology: "
          "text (default) or json.");
ABSL_FLAG(int, ewma_shift, 3,
          "Path scoring: latency EWMA weight, 0-16; each window's mean counts "
          "1/2^shift (3: 1/8 new, 7/8 old, as the kernel's latency "
          "iopolicy).");
ABSL_FLAG(double, degraded_ratio, 3,
          "Path scoring: a path whose latency EWMA is at least this many "
          "times the best usable sibling's (for --degraded_windows windows) "
          "is degraded; > 1.");
ABSL_FLAG(int, degraded_windows, 2,
          "Path scoring: consecutive windows over --degraded_ratio before a "
          "path is degraded; >= 1.");
ABSL_FLAG(int, idle_windows, 10,
          "Path scoring: windows without a completed I/O before a path is "
          "idle; >= 1.");
ABSL_FLAG(int, recover_windows, 5,
          "Path scoring: consecutive clean windows before a degraded or "
          "failed path is healthy again; >= 1.");
ABSL_FLAG(double, reseed_ratio, 3,
          "Path scoring: a window whose mean latency differs from the EWMA "
          "by this factor or more (over >= 16 I/Os) is a step: up, the EWMA "
          "takes it at once; down, once the next window confirms it; an "
          "unconfirmed step falls back to the plain EWMA. 0 turns this off "
          "(the kernel's plain EWMA), else > 1.");
ABSL_FLAG(std::string, log_level, "info",
          "Log level: debug, info, warn or error. Logs go to stderr.");

namespace pathwise::agent {

bool AbslParseFlag(absl::string_view text, BpfMode* mode, std::string* error) {
  if (text == "auto") {
    *mode = BpfMode::kAuto;
  } else if (text == "required") {
    *mode = BpfMode::kRequired;
  } else if (text == "off") {
    *mode = BpfMode::kOff;
  } else {
    *error = "want auto, required or off";
    return false;
  }
  return true;
}

std::string AbslUnparseFlag(BpfMode mode) {
  switch (mode) {
    case BpfMode::kAuto:
      return "auto";
    case BpfMode::kRequired:
      return "required";
    case BpfMode::kOff:
      return "off";
  }
  return "auto";
}

namespace {

// Which flags each command accepts, in help order.
const std::map<Command, std::vector<std::string>>& CommandFlags() {
  static const auto* m = new std::map<Command, std::vector<std::string>>{
      {Command::kServe,
       {"listen_address", "interval", "sysfs_root", "bpf", "bpf_stats",
        "devices", "ewma_shift", "degraded_ratio", "degraded_windows",
        "idle_windows", "recover_windows", "reseed_ratio", "log_level"}},
      {Command::kSnapshot,
       {"duration", "format", "interval", "sysfs_root", "bpf", "bpf_stats",
        "devices", "ewma_shift", "degraded_ratio", "degraded_windows",
        "idle_windows", "recover_windows", "reseed_ratio", "log_level"}},
      {Command::kTopology, {"format", "sysfs_root", "log_level"}},
  };
  return *m;
}

const char* CommandName(Command c) {
  switch (c) {
    case Command::kServe:
      return "serve";
    case Command::kSnapshot:
      return "snapshot";
    case Command::kTopology:
      return "topology";
    case Command::kHelp:
      return "help";
    case Command::kVersion:
      return "version";
  }
  return "?";
}

bool IsBoolFlag(const absl::CommandLineFlag& f) { return f.IsOfType<bool>(); }

}  // namespace

absl::StatusOr<Options> ParseArgs(const std::vector<std::string>& args) {
  std::set<std::string> known;
  for (const auto& [cmd, names] : CommandFlags()) {
    known.insert(names.begin(), names.end());
  }
  std::optional<Command> command;
  std::vector<std::string> given;  // flag names, for applicability checks
  bool help = false, version = false;

  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.size() > 1 && arg[0] == '-') {
      absl::string_view body = arg;
      body.remove_prefix(body.size() > 2 && body[1] == '-' ? 2 : 1);
      std::string name(body.substr(0, body.find('=')));
      const bool has_value = body.find('=') != absl::string_view::npos;
      if (name == "help" || name == "h" || name == "helpfull") {
        help = true;
        continue;
      }
      if (name == "version") {
        version = true;
        continue;
      }
      if (!known.contains(name)) {
        return absl::InvalidArgumentError(
            absl::StrCat("unknown flag --", name, " (see pathwise --help)"));
      }
      absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
      if (flag == nullptr) {
        return absl::InternalError(
            absl::StrCat("flag --", name, " is not registered"));
      }
      std::string value;
      if (has_value) {
        value = std::string(body.substr(body.find('=') + 1));
      } else if (IsBoolFlag(*flag)) {
        value = "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat("flag --", name, " needs a value"));
      }
      std::string error;
      if (!flag->ParseFrom(value, &error)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "invalid value \"", value, "\" for --", name, ": ", error));
      }
      given.push_back(name);
      continue;
    }
    if (command.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unexpected argument \"", arg, "\" (see pathwise --help)"));
    }
    if (arg == "serve") {
      command = Command::kServe;
    } else if (arg == "snapshot") {
      command = Command::kSnapshot;
    } else if (arg == "topology") {
      command = Command::kTopology;
    } else if (arg == "help") {
      help = true;
      command = Command::kHelp;
    } else if (arg == "version") {
      version = true;
      command = Command::kVersion;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown command \"", arg,
          "\": want serve, snapshot or topology (see pathwise --help)"));
    }
  }

  Options o;
  if (help) {
    o.command = Command::kHelp;
    return o;
  }
  if (version) {
    o.command = Command::kVersion;
    return o;
  }
  o.command = command.value_or(Command::kServe);
  const std::vector<std::string>& allowed = CommandFlags().at(o.command);
  for (const std::string& name : given) {
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("flag --", name, " does not apply to 'pathwise ",
                       CommandName(o.command), "'"));
    }
  }

  o.listen_address = absl::GetFlag(FLAGS_listen_address);
  o.interval = absl::GetFlag(FLAGS_interval);
  o.sysfs_root = absl::GetFlag(FLAGS_sysfs_root);
  o.bpf = absl::GetFlag(FLAGS_bpf);
  o.bpf_stats = absl::GetFlag(FLAGS_bpf_stats);
  o.devices = absl::GetFlag(FLAGS_devices);
  o.duration = absl::GetFlag(FLAGS_duration);
  o.format = absl::GetFlag(FLAGS_format);
  o.log_level = absl::GetFlag(FLAGS_log_level);
  o.scoring.ewma_shift = absl::GetFlag(FLAGS_ewma_shift);
  o.scoring.degraded_ratio = absl::GetFlag(FLAGS_degraded_ratio);
  o.scoring.degraded_windows = absl::GetFlag(FLAGS_degraded_windows);
  o.scoring.idle_windows = absl::GetFlag(FLAGS_idle_windows);
  o.scoring.recover_windows = absl::GetFlag(FLAGS_recover_windows);
  o.scoring.reseed_ratio = absl::GetFlag(FLAGS_reseed_ratio);

  if (o.scoring.ewma_shift < 0 || o.scoring.ewma_shift > 16) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid value \"", o.scoring.ewma_shift,
                     "\" for --ewma_shift: want 0 to 16"));
  }
  // `!(x > 1)` also rejects NaN.
  if (!(o.scoring.degraded_ratio > 1) || std::isinf(o.scoring.degraded_ratio)) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid value \"", o.scoring.degraded_ratio,
                     "\" for --degraded_ratio: must be a number above 1"));
  }
  if (o.scoring.reseed_ratio != 0 &&
      (!(o.scoring.reseed_ratio > 1) || std::isinf(o.scoring.reseed_ratio))) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid value \"", o.scoring.reseed_ratio,
                     "\" for --reseed_ratio: want 0 (off) or above 1"));
  }
  for (const auto& [name, value] :
       {std::pair<const char*, int>{"degraded_windows",
                                    o.scoring.degraded_windows},
        {"idle_windows", o.scoring.idle_windows},
        {"recover_windows", o.scoring.recover_windows}}) {
    if (value < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "invalid value \"", value, "\" for --", name, ": must be >= 1"));
    }
  }

  if (o.interval <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid value \"", absl::FormatDuration(o.interval),
                     "\" for --interval: must be positive"));
  }
  if (o.duration < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid value \"", absl::FormatDuration(o.duration),
                     "\" for --duration: must not be negative"));
  }
  if (o.devices != "nvme" && o.devices != "all") {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid value \"", o.devices, "\" for --devices: want nvme or all"));
  }
  if (o.sysfs_root.empty()) {
    return absl::InvalidArgumentError("--sysfs_root must not be empty");
  }
  static const std::set<std::string> kLevels = {"debug", "info", "warn",
                                                "error"};
  if (!kLevels.contains(o.log_level)) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid value \"", o.log_level,
                     "\" for --log_level: want debug, info, warn or error"));
  }
  if (o.command == Command::kSnapshot) {
    if (o.format.empty()) o.format = "prometheus";
    if (o.format != "prometheus" && o.format != "json") {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid value \"", o.format,
                       "\" for --format: snapshot wants prometheus or json"));
    }
  } else if (o.command == Command::kTopology) {
    if (o.format.empty()) o.format = "text";
    if (o.format != "text" && o.format != "json") {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid value \"", o.format,
                       "\" for --format: topology wants text or json"));
    }
  }
  return o;
}

std::string HelpText() {
  std::string out =
      "pathwise: makes every path of Linux NVMe native multipath visible.\n"
      "\n"
      "Usage:\n"
      "  pathwise [serve] [flags]   run the agent: collect every --interval "
      "and\n"
      "                             serve /metrics, /healthz, "
      "/api/v1/topology, /\n"
      "  pathwise snapshot [flags]  collect for --duration, print one "
      "exposition\n"
      "                             (or JSON document) to stdout, exit 0\n"
      "  pathwise topology [flags]  print subsystem -> head -> paths, like\n"
      "                             `nvme show-topology`\n"
      "  pathwise lab [flags]       simulate the path selection policies "
      "on a\n"
      "                             scenario file (`pathwise lab --help`)\n"
      "  pathwise --help | --version\n";
  for (Command c : {Command::kServe, Command::kSnapshot, Command::kTopology}) {
    absl::StrAppend(&out, "\nFlags of '", CommandName(c), "':\n");
    for (const std::string& name : CommandFlags().at(c)) {
      absl::CommandLineFlag* f = absl::FindCommandLineFlag(name);
      if (f == nullptr) continue;
      std::string def = f->DefaultValue();
      if (name == "format") {
        def = c == Command::kSnapshot ? "prometheus" : "text";
      }
      absl::StrAppend(&out, "  --", name, " (default \"", def, "\")\n      ",
                      f->Help(), "\n");
    }
  }
  absl::StrAppend(&out,
                  "\nExit status: 0 success, 1 runtime failure (e.g. the "
                  "listen port is in use), 2 bad usage.\n");
  return out;
}

}  // namespace pathwise::agent

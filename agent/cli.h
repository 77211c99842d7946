// SPDX-License-Identifier: Apache-2.0
// Command line of the `pathwise` binary: one CLI11 App with the subcommands
// serve (the default), snapshot, topology, queues, top and lab, built afresh by
// each ParseArgs call so that parsing keeps no state between calls.
//
// The contract for bad input is exit 2 with one line, `pathwise: <message>`;
// ParseArgs returns that message as its error, and the messages say which
// flag and value are wrong in pathwise's own words, not CLI11's.
#ifndef PATHWISE_AGENT_CLI_H_
#define PATHWISE_AGENT_CLI_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "control/iopolicy_decider.h"
#include "datapath/datapath_cli.h"
#include "exporters/histogram_exposition.h"
#include "exporters/prometheus_families.h"
#include "lab/lab_cli.h"
#include "scoring/scoring.h"
#include "ui/top.h"

namespace pathwise::agent {

enum class Command {
  kServe,
  kSnapshot,
  kTopology,
  kQueues,
  kTop,
  kLab,
  kDatapath,
  kHelp,
  kVersion
};

enum class BpfMode { kAuto, kRequired, kOff };

// The defaults here are the flags' defaults.
struct Options {
  Command command = Command::kServe;
  std::string listen_address = ":9877";
  // serve: TLS and basic auth (exporters/web_config.h); empty: plain HTTP.
  std::string web_config_file;
  // serve: HTTP connections held at once, and by one client address (an
  // IPv6 /64); 0 per client: no limit (exporters::HttpServerOptions).
  int web_max_connections = 1024;
  int web_max_connections_per_client = 512;
  absl::Duration interval = absl::Seconds(1);
  std::string sysfs_root = "/sys";
  BpfMode bpf = BpfMode::kAuto;
  bool bpf_stats = false;        // hold BPF_ENABLE_STATS while running
  std::string devices = "nvme";  // nvme | all (BPF sampler only)
  absl::Duration duration = absl::Seconds(2);
  // Resolved per command: snapshot prometheus|json, topology text|json.
  std::string format;
  std::string log_level = "info";
  std::string log_format = "logfmt";  // logfmt | json
  // One "flag --OLD is deprecated, use --NEW" per former flag name used;
  // the binary logs each once it has a logger.
  std::vector<std::string> deprecated_flags;
  // serve, snapshot: which series the exposition carries
  // (--metrics.profile), and the classic buckets of the latency histograms
  // (--histogram-buckets; nullopt: the profile's, see ExpositionOf).
  exporters::MetricsProfile metrics_profile =
      exporters::MetricsProfile::kDefault;
  std::optional<exporters::HistogramBuckets> histogram_buckets;
  // serve: controller probes (control/prober.h); a zero interval turns
  // them off.
  absl::Duration probe_interval = absl::Seconds(1);
  absl::Duration probe_timeout = absl::Seconds(2);
  // Path scoring (--ewma-shift, --degraded-ratio, --degraded-windows,
  // --idle-windows, --recover-windows, --reseed-ratio).
  scoring::Config scoring;
  // serve: the iopolicy actuator (--actuate, --actuate-hold,
  // --actuate-min-interval, --actuate-subsystems, --actuate-restore).
  control::IopolicyActuatorConfig actuate;
  // serve: --head-iostats (control/head_iostats.h); its sysfs_root is
  // --path.sysfs's, set when the stage is made.
  model::HeadIostatsMode head_iostats = model::HeadIostatsMode::kKeep;
  // --kernel-queue-depth: whether the kernel has the queue-depth iopolicy;
  // nullopt (auto): decided by its release (Linux >= 6.11).
  std::optional<bool> kernel_queue_depth;
  // Command::kTop: its own flags (--url, --once, --sort, ...); --interval,
  // --format, --path.sysfs and --bpf land in the fields above.
  ui::TopOptions top;
  // Command::kLab: lab's own flags (lab/lab_cli.h).
  lab::LabOptions lab;
  // Queues and flows: serve/snapshot --queues exports the queue map;
  // `pathwise queues --plan` prints the tuning plan.
  bool queues = false;
  bool queues_plan = false;
  // Command::kDatapath: the datapath's own flags (datapath/datapath_cli.h),
  // as typed and as checked.
  datapath::DatapathFlags datapath_flags;
  datapath::DatapathOptions datapath;
  // Command::kHelp: what to print: the help of the command it was asked of
  // (`pathwise snapshot --help`), of the binary, or (hidden `pathwise help
  // --markdown` / `--man`) the flag reference generated from the commands.
  std::string help;
  // `pathwise help --man`: print ManPage() (which needs the version).
  bool help_man = false;
};

// Parses argv (argv[0] excluded). Flags follow their command; without a
// command (or with flags only) the command is serve. `-` and `_` are the
// same in flag names. The error message is a single line.
absl::StatusOr<Options> ParseArgs(const std::vector<std::string>& args);

// The exposition serve and snapshot render: the profile, and the buckets
// given or else the profile's (sparse by default, coarse with full).
exporters::ExpositionOptions ExpositionOf(const Options& o);

// `pathwise --help`: the commands, one line each, and the global flags;
// each command's flags are in `pathwise COMMAND --help`.
std::string HelpText();

// The flag reference of every command (docs/flags.md) and the pathwise(1)
// man page (dated `date`, YYYY-MM-DD), both generated from the commands'
// definitions.
std::string FlagReferenceMarkdown();
std::string ManPage(absl::string_view version, absl::string_view date);

}  // namespace pathwise::agent

#endif  // PATHWISE_AGENT_CLI_H_

// SPDX-License-Identifier: Apache-2.0
// `pathwise datapath`: its flags and the run of the userspace multipath
// datapath as a ublk block device.
//
//   pathwise datapath --namespace ID|auto
//                     [--policy round-robin|queue-depth|pathwise]
//                     [--queues N] [--depth N] [--no-path-timeout D]
//                     [--io-timeout D] [--ana-interval D]
//                     [--web.listen-address [HOST]:PORT]
//                     [--web.config.file FILE]
//                     [--web.max-connections N]
//                     [--web.max-connections-per-client N]
//                     [--histogram-buckets coarse|fine]
//
// Creates /dev/ublkbN over every path of one namespace (the kernel's
// native multipath off: nvme_core.multipath=N), prints its path on stdout,
// serves it until SIGTERM or SIGINT, then removes it. Meanwhile /metrics
// and /healthz are served on --web.listen-address (datapath/exposition.h).
//
// Exit codes: 0 served and removed cleanly, 1 a runtime failure, 2 bad
// input with one line on stderr (bad flags, no such namespace, a namespace
// with one path, native multipath on, ublk_drv missing, not root).
#ifndef PATHWISE_DATAPATH_DATAPATH_CLI_H_
#define PATHWISE_DATAPATH_DATAPATH_CLI_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "datapath/failover.h"
#include "exporters/histogram_exposition.h"
#include "policy/policy.h"

namespace CLI {
class App;
}  // namespace CLI

namespace pathwise::datapath {

struct DatapathOptions {
  std::string namespace_spec = "auto";
  policy::Policy policy = policy::Policy::kPathwise;
  uint16_t queues = 1;
  uint16_t depth = 64;
  // The ublk disk's I/O scheduler (datapath/ublk/scheduler.h).
  std::string scheduler = "none";
  absl::Duration no_path_timeout = absl::Seconds(30);
  absl::Duration io_timeout = absl::Seconds(10);
  // How long a write cut off by a path failure waits before another path
  // takes it (failover.h, WriteFenceNs); empty: each controller's KATO +
  // CQT.
  std::optional<absl::Duration> write_fence;
  SeededDefect defect = SeededDefect::kNone;
  // ublk user recovery (datapath/ublk/device.h): the device outlives a
  // crash of this process; recover_dev_id >= 0 takes such a device back.
  bool user_recovery = false;
  int recover_dev_id = -1;
  // The HTTP endpoint (/metrics, /healthz): "" serves none. Its default
  // port is not the agent's (9877), so both may run on one node.
  std::string listen_address = ":9879";
  std::string web_config_file;  // "" for plain HTTP without auth
  int web_max_connections = 1024;
  int web_max_connections_per_client = 512;
  exporters::HistogramBuckets histogram_buckets =
      exporters::HistogramBuckets::kCoarse;
  // pathwise_build_info's labels (the binary's version).
  std::string version = "unknown";
  std::string revision = "unknown";
  // How often every path's ANA log page is read besides at start and after
  // an ANA status.
  absl::Duration ana_interval = absl::Seconds(10);
  // For tests: another sysfs tree, /dev directory and ublk control node.
  std::string sysfs_root = "/sys";
  std::string dev_dir = "/dev";
  std::string ublk_control = "/dev/ublk-control";
};

// The flags as typed, before CheckDatapathArgs turns them into options.
struct DatapathFlags {
  std::string namespace_spec;
  std::string policy = "pathwise";
  int queues = 1;
  int depth = 64;
  std::string scheduler = "none";
  std::string no_path_timeout = "30s";
  std::string io_timeout = "10s";
  std::string write_fence = "auto";
  std::string seed_defect = "none";
  bool user_recovery = false;
  int recover = -1;
  std::string listen_address = ":9879";
  std::string web_config_file;
  int web_max_connections = 1024;
  int web_max_connections_per_client = 512;
  std::string histogram_buckets = "coarse";
  std::string ana_interval = "10s";
  std::string sysfs_root = "/sys";
  std::string dev_dir = "/dev";
  std::string ublk_control = "/dev/ublk-control";
  // Former flag names used (--web.listen-address, --path.sysfs), one warning
  // each (cli/flag_alias.h).
  std::vector<std::string> deprecated;
};

// Adds the flags, description and footer to `app` (the agent's `datapath`
// subcommand). Parsing `app` fills `*flags`.
void AddDatapathFlags(CLI::App& app, DatapathFlags* flags);

// The flags as options, or a one-line error naming the flag.
absl::StatusOr<DatapathOptions> CheckDatapathArgs(const DatapathFlags& flags);

// Runs the datapath; the exit code above. `out` gets the device path,
// `err` the one-line errors (prefixed "pathwise: ") and a summary.
int RunDatapath(const DatapathOptions& options, std::ostream& out,
                std::ostream& err);

}  // namespace pathwise::datapath

#endif  // PATHWISE_DATAPATH_DATAPATH_CLI_H_

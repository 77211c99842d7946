// SPDX-License-Identifier: Apache-2.0
#include "datapath/datapath_cli.h"

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "cli/flag_alias.h"
#include "datapath/ublk/scheduler.h"
#include "exporters/http_server.h"
#include "exporters/listen_socket.h"

namespace pathwise::datapath {
namespace {

absl::Status ParsePositiveDuration(const std::string& flag,
                                   const std::string& text, absl::Duration* d) {
  if (!absl::ParseDuration(text, d) || *d <= absl::ZeroDuration() ||
      *d == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag,
                     " must be a positive duration such as 30s, "
                     "not \"",
                     text, "\""));
  }
  return absl::OkStatus();
}

}  // namespace

void AddDatapathFlags(CLI::App& app, DatapathFlags* f) {
  app.description(
      "serve one NVMe namespace as /dev/ublkbN, choosing a path per I/O");
  app.footer(
      "Needs root, nvme_core.multipath=N and the ublk_drv module. Prints the\n"
      "device's path, serves it until SIGTERM or SIGINT, then removes it.");
  app.add_option("--namespace", f->namespace_spec,
                 "auto (the only namespace with two or more paths), its "
                 "identity (uuid.<uuid>, nguid.<hex>, eui.<hex>, as sysfs "
                 "wwid spells it) or a per-controller name (nvme0n1)")
      ->type_name("ID|auto");
  app.add_option("--policy", f->policy, "round-robin, queue-depth or pathwise")
      ->type_name("POLICY")
      ->default_str("pathwise");
  app.add_option("--queues", f->queues, "ublk queues, one thread each")
      ->type_name("N")
      ->default_str("1");
  app.add_option("--depth", f->depth, "requests in flight per queue")
      ->type_name("N")
      ->default_str("64");
  app.add_option("--scheduler", f->scheduler,
                 "the device's I/O scheduler, set when it starts; \"kernel\" "
                 "keeps blk-mq's default (mq-deadline for one queue)")
      ->type_name("NAME|kernel")
      ->default_str("none");
  app.add_option("--no-path-timeout", f->no_path_timeout,
                 "with no usable path, how long I/O waits for one before it "
                 "fails with EIO")
      ->type_name("DURATION")
      ->default_str("30s");
  app.add_option("--io-timeout", f->io_timeout,
                 "a command out longer than this takes its path out of use")
      ->type_name("DURATION")
      ->default_str("10s");
  app.add_option("--write-fence", f->write_fence,
                 "how long a write cut off by a path failure waits before "
                 "another path takes it, so the old path cannot land it "
                 "over newer data; auto: the controller's keep-alive "
                 "timeout + Command Quiesce Time (0 on PCIe without CQT); "
                 "0s: at once, as the kernel's multipath does")
      ->type_name("DURATION|auto")
      ->default_str("auto");
  app.add_flag("--user-recovery", f->user_recovery,
               "create the device with ublk user recovery: if this process "
               "dies, the kernel keeps /dev/ublkbN and holds its I/O until "
               "`pathwise datapath --recover ID` takes it back");
  app.add_option("--recover", f->recover,
                 "take back ublk device ID, left by a datapath that died "
                 "with --user-recovery, instead of creating one")
      ->type_name("ID");
  app.add_option("--web.listen-address", f->listen_address,
                 "serve /metrics and /healthz on [host]:port ([::]:PORT for "
                 "IPv6 and IPv4); \"\" "
                 "serves none")
      ->type_name("[HOST]:PORT")
      ->default_str(":9879");
  app.add_option("--web.config.file", f->web_config_file,
                 "TLS and basic authentication for the endpoint (the "
                 "agent's format)")
      ->type_name("FILE");
  app.add_option("--web.max-connections", f->web_max_connections,
                 "HTTP connections held at once, all clients")
      ->type_name("N")
      ->default_str("1024");
  app.add_option("--web.max-connections-per-client",
                 f->web_max_connections_per_client,
                 "HTTP connections one client address (IPv6: /64) may hold; "
                 "0: no limit")
      ->type_name("N")
      ->default_str("512");
  app.add_option("--histogram-buckets", f->histogram_buckets,
                 "classic buckets of the text exposition's latency "
                 "histograms: coarse or fine")
      ->type_name("coarse|fine")
      ->default_str("coarse");
  app.add_option("--ana-interval", f->ana_interval,
                 "how often each path's ANA log page is read, besides at "
                 "start and after a command returns an ANA status")
      ->type_name("DURATION")
      ->default_str("10s");
  // Tests: a captured sysfs tree, another /dev, a missing control node.
  app.add_option("--path.sysfs", f->sysfs_root)->group("");
  app.add_option("--dev-dir", f->dev_dir)->group("");
  app.add_option("--ublk-control", f->ublk_control)->group("");
  // The fault tests: a datapath with a defect their checks must catch.
  app.add_option("--seed-defect", f->seed_defect)->group("");
  // The former names, last: the help leaves their group out only as the
  // last group. Each stores its value only without the new name.
  auto alias = [&app, f](const std::string& old_name,
                         const std::string& new_name, std::string* out) {
    const CLI::Option* primary = app.get_option("--" + cli::FlagKey(new_name));
    cli::DeprecatedAlias(app.add_option_function<std::string>(
                             "--" + cli::FlagKey(old_name),
                             [primary, out](const std::string& v) {
                               if (primary->count() == 0) *out = v;
                             }),
                         old_name, new_name, &f->deprecated);
  };
  alias("listen_address", "web.listen-address", &f->listen_address);
  alias("sysfs_root", "path.sysfs", &f->sysfs_root);
}

absl::StatusOr<DatapathOptions> CheckDatapathArgs(const DatapathFlags& f) {
  DatapathOptions o;
  if (f.namespace_spec.empty()) {
    return absl::InvalidArgumentError(
        "datapath needs --namespace (an identity, nvmeXnY, or auto)");
  }
  o.namespace_spec = f.namespace_spec;
  const std::optional<policy::Policy> p = policy::PolicyFromName(f.policy);
  if (!p ||
      (*p != policy::Policy::kRoundRobin && *p != policy::Policy::kQueueDepth &&
       *p != policy::Policy::kPathwise)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--policy must be round-robin, queue-depth or "
                     "pathwise, not \"",
                     f.policy, "\""));
  }
  o.policy = *p;
  if (f.queues < 1 || f.queues > 64) {
    return absl::InvalidArgumentError(
        absl::StrCat("--queues must be 1..64, not ", f.queues));
  }
  if (f.depth < 1 || f.depth > 4096) {  // UBLK_MAX_QUEUE_DEPTH
    return absl::InvalidArgumentError(
        absl::StrCat("--depth must be 1..4096, not ", f.depth));
  }
  o.queues = static_cast<uint16_t>(f.queues);
  o.depth = static_cast<uint16_t>(f.depth);
  if (absl::Status s = ublk::ValidateSchedulerName(f.scheduler); !s.ok()) {
    return s;
  }
  o.scheduler = f.scheduler;
  if (absl::Status s = ParsePositiveDuration(
          "no-path-timeout", f.no_path_timeout, &o.no_path_timeout);
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          ParsePositiveDuration("io-timeout", f.io_timeout, &o.io_timeout);
      !s.ok()) {
    return s;
  }
  if (f.write_fence != "auto") {
    absl::Duration fence;
    if (!absl::ParseDuration(f.write_fence, &fence) ||
        fence < absl::ZeroDuration() || fence > absl::Hours(1)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--write-fence must be auto or a duration of 0s..1h, not \"",
          f.write_fence, "\""));
    }
    o.write_fence = fence;
  }
  if (f.seed_defect == "ack_before_completion") {
    o.defect = SeededDefect::kAckBeforeCompletion;
  } else if (f.seed_defect == "retry_timed_out_at_once") {
    o.defect = SeededDefect::kRetryTimedOutAtOnce;
  } else if (f.seed_defect != "none") {
    return absl::InvalidArgumentError(
        absl::StrCat("--seed-defect must be none, ack_before_completion or "
                     "retry_timed_out_at_once, not \"",
                     f.seed_defect, "\""));
  }
  if (f.recover < -1 || f.recover > 1 << 20) {
    return absl::InvalidArgumentError(
        absl::StrCat("--recover must be a ublk device id, not ", f.recover));
  }
  o.user_recovery = f.user_recovery || f.recover >= 0;
  o.recover_dev_id = f.recover;
  if (!f.listen_address.empty()) {
    if (absl::StatusOr<exporters::ListenAddress> a =
            exporters::ParseListenAddress(f.listen_address);
        !a.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid --web.listen-address \"", f.listen_address,
                       "\": ", a.status().message()));
    }
  }
  o.listen_address = f.listen_address;
  o.web_config_file = f.web_config_file;
  if (f.web_max_connections_per_client < 0 ||
      f.web_max_connections_per_client > 1024) {
    return absl::InvalidArgumentError(
        absl::StrCat("--web.max-connections-per-client must be 0..1024, not ",
                     f.web_max_connections_per_client));
  }
  o.web_max_connections_per_client = f.web_max_connections_per_client;
  if (f.web_max_connections < 1 || f.web_max_connections > 65536) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--web.max-connections must be 1..65536, not ", f.web_max_connections));
  }
  o.web_max_connections = f.web_max_connections;
  if (f.histogram_buckets != "coarse" && f.histogram_buckets != "fine") {
    return absl::InvalidArgumentError(
        absl::StrCat("--histogram-buckets must be coarse or fine, not \"",
                     f.histogram_buckets, "\""));
  }
  o.histogram_buckets = f.histogram_buckets == "fine"
                            ? exporters::HistogramBuckets::kFine
                            : exporters::HistogramBuckets::kCoarse;
  if (absl::Status s = ParsePositiveDuration("ana-interval", f.ana_interval,
                                             &o.ana_interval);
      !s.ok()) {
    return s;
  }
  o.sysfs_root = f.sysfs_root;
  o.dev_dir = f.dev_dir;
  o.ublk_control = f.ublk_control;
  return o;
}

}  // namespace pathwise::datapath

// SPDX-License-Identifier: Apache-2.0
// RunDatapath (datapath_cli.h): the checks that get one line each, then the
// device's life from Create to Stop.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "collectors/sysfs_reader.h"
#include "datapath/ana_monitor.h"
#include "datapath/datapath_cli.h"
#include "datapath/exposition.h"
#include "datapath/namespaces.h"
#include "datapath/nvme_backend.h"
#include "datapath/ublk/control.h"
#include "datapath/ublk/device.h"
#include "exporters/web_config.h"

extern char** environ;

namespace pathwise::datapath {
namespace {

constexpr int kExitRuntime = 1;
constexpr int kExitUsage = 2;

int Line(std::ostream& err, int code, const std::string& message) {
  err << "pathwise: " << message << "\n";
  return code;
}

bool Exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

// `modprobe ublk_drv`, quietly; its exit status, or -1 when it could not
// run.
int Modprobe() {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  char arg0[] = "modprobe";
  char arg1[] = "ublk_drv";
  char* argv[] = {arg0, arg1, nullptr};
  pid_t pid = 0;
  const int r = posix_spawnp(&pid, "modprobe", &fa, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (r != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The control node, loading ublk_drv when it is missing (only for the real
// node: tests point --ublk-control at a missing path to see the line).
absl::Status EnsureUblk(const std::string& control) {
  if (Exists(control)) return absl::OkStatus();
  if (control != DatapathOptions().ublk_control) {
    return absl::FailedPreconditionError(ublk::kNoUblkMessage);
  }
  const int rc = Modprobe();
  for (int i = 0; i < 40 && rc == 0 && !Exists(control); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (Exists(control)) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "ublk_drv is not loaded and `modprobe ublk_drv` ",
      rc < 0 ? std::string("could not run")
             : absl::StrCat("failed (exit ", rc, ")"),
      "; the datapath needs Linux >= 6.1 with CONFIG_BLK_DEV_UBLK"));
}

std::string PathNames(const NamespaceGroup& g) {
  std::vector<std::string> names;
  for (const NamespacePath& p : g.paths) names.push_back(p.name);
  return absl::StrJoin(names, ", ");
}

void Summary(const NvmeBackend& backend, std::ostream& err) {
  const DatapathStats s = backend.Stats();
  err << "pathwise: datapath: " << s.requests << " requests, "
      << s.failed_requests << " failed, " << s.no_path_waits
      << " waited for a path\n";
  for (size_t i = 0; i < s.paths.size(); ++i) {
    const PathStats& p = s.paths[i];
    err << "pathwise: path " << backend.group().paths[i].name << ": " << p.ios
        << " I/Os, " << p.errors << " errors, " << p.failovers << " failovers, "
        << p.timeouts << " timeouts, " << p.probes << " probes\n";
  }
}

// Each path's write fence: --write-fence, or its controller's KATO (sysfs
// `kato`, seconds; the fabrics default where the kernel has no such
// attribute) + CQT on fabrics, CQT alone on PCIe. One line per path.
std::vector<int64_t> WriteFences(
    const DatapathOptions& o, const NamespaceGroup& group,
    const std::vector<nvme::RetryDelayTimes>& identify, std::ostream& err) {
  std::vector<int64_t> fences;
  const collectors::SysfsReader sysfs(o.sysfs_root);
  for (size_t i = 0; i < group.paths.size(); ++i) {
    const NamespacePath& p = group.paths[i];
    const uint16_t cqt_ms = i < identify.size() ? identify[i].cqt_ms : 0;
    std::string how;
    int64_t fence = 0;
    if (o.write_fence) {
      fence = absl::ToInt64Nanoseconds(*o.write_fence);
      how = "--write-fence";
    } else {
      const std::string dir = absl::StrCat("class/nvme/", p.controller);
      const std::string transport =
          sysfs.ReadAttr(dir + "/transport").value_or("");
      const bool fabrics = !transport.empty() && transport != "pcie";
      const int64_t kato_s = sysfs.ReadInt(dir + "/kato").value_or(-1);
      // KATO 0 (keep-alive off) bounds nothing: the default is assumed.
      fence = WriteFenceNs(fabrics, kato_s > 0 ? kato_s * 1'000'000'000 : -1,
                           cqt_ms);
      if (!fabrics) {
        how = absl::StrCat(transport.empty() ? "transport unknown" : transport,
                           ": CQT ", cqt_ms, " ms");
      } else if (kato_s <= 0) {
        how = absl::StrCat("KATO ", kato_s < 0 ? "unknown" : "0",
                           ", 5 s assumed + CQT ", cqt_ms, " ms");
      } else {
        how = absl::StrCat("KATO ", kato_s, " s + CQT ", cqt_ms, " ms");
      }
    }
    err << "pathwise: path " << p.name << ": write fence " << fence / 1'000'000
        << " ms (" << how << ")\n";
    fences.push_back(fence);
  }
  return fences;
}

// The metrics endpoint over `backend` serving `device`; null when
// --web.listen-address is "".
absl::StatusOr<std::unique_ptr<exporters::HttpServer>> StartEndpoint(
    const DatapathOptions& o, NvmeBackend& backend, const std::string& device,
    exporters::WebConfig web) {
  if (o.listen_address.empty()) return nullptr;
  auto counters = std::make_shared<exporters::HttpServerCounters>();
  auto view = [&backend, device, policy = o.policy] {
    DatapathView v;
    v.device = device;
    v.policy = policy;
    v.group = backend.group();
    v.stats = backend.Stats();
    for (int i = 0; i < backend.paths().size(); ++i) {
      v.status.push_back(backend.paths().Get(i));
    }
    v.selector = backend.selector().View();
    return v;
  };
  return exporters::HttpServer::Start(
      o.listen_address,
      DatapathRoutes(view, o.sysfs_root, {o.version, o.revision},
                     o.histogram_buckets, counters),
      exporters::HttpServerOptions{
          .max_connections = o.web_max_connections,
          .max_connections_per_client = o.web_max_connections_per_client,
          .web = std::move(web),
          .counters = counters});
}

}  // namespace

int RunDatapath(const DatapathOptions& o, std::ostream& out,
                std::ostream& err) {
  if (NativeMultipathOn(o.sysfs_root)) {
    return Line(err, kExitUsage,
                "native NVMe multipath is on (nvme_core.multipath=Y): boot "
                "with nvme_core.multipath=N for the datapath, or keep native "
                "multipath and tune it with `pathwise serve --actuate`");
  }
  absl::StatusOr<std::vector<NamespacePath>> found =
      ReadNamespacePaths(o.sysfs_root);
  if (!found.ok()) {
    return Line(err, kExitRuntime, std::string(found.status().message()));
  }
  absl::StatusOr<NamespaceGroup> group =
      ResolveNamespace(GroupNamespaces(*std::move(found)), o.namespace_spec);
  if (!group.ok()) {
    return Line(err, kExitUsage, std::string(group.status().message()));
  }
  if (geteuid() != 0) {
    return Line(err, kExitUsage,
                "the datapath needs root (it opens /dev/ngXnY and "
                "/dev/ublk-control)");
  }
  if (absl::Status s = EnsureUblk(o.ublk_control); !s.ok()) {
    return Line(err, kExitUsage, std::string(s.message()));
  }
  exporters::WebConfig web;
  if (!o.web_config_file.empty()) {
    absl::StatusOr<exporters::WebConfig> loaded =
        exporters::LoadWebConfig(o.web_config_file);
    if (!loaded.ok()) {
      return Line(
          err, kExitUsage,
          absl::StrCat("--web.config.file ", loaded.status().message()));
    }
    web = *std::move(loaded);
  }

  BackendOptions bo;
  bo.policy = o.policy;
  bo.no_path_timeout = o.no_path_timeout;
  bo.io_timeout = o.io_timeout;
  bo.defect = o.defect;
  bo.dev_dir = o.dev_dir;
  absl::StatusOr<std::unique_ptr<NvmeBackend>> backend =
      NvmeBackend::Open(*group, bo);
  if (!backend.ok()) {
    return Line(err,
                absl::IsFailedPrecondition(backend.status()) ? kExitUsage
                                                             : kExitRuntime,
                std::string(backend.status().message()));
  }

  // Every thread the device and the ANA monitor start inherits this mask;
  // the signals are taken here with sigwait.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  // The paths' ANA states before the first I/O, then kept current off the
  // queue threads. Declared before the device: the queues call its
  // handler until the device stops.
  absl::Mutex log_mu;
  ControllerAnaSource ana_source(*group, o.dev_dir, absl::Seconds(5));
  std::vector<uint32_t> nsids;
  std::vector<std::string> names;
  for (size_t i = 0; i < group->paths.size(); ++i) {
    nsids.push_back((*backend)->nsid(static_cast<int>(i)));
    names.push_back(group->paths[i].name);
  }
  // The controllers' Command Retry Delay Times, before any I/O: a read that
  // fails leaves that path's retries undelayed (and says so).
  std::vector<nvme::RetryDelayTimes> crdt(group->paths.size());
  for (size_t i = 0; i < group->paths.size(); ++i) {
    absl::StatusOr<nvme::RetryDelayTimes> t =
        ana_source.ReadRetryDelayTimes(static_cast<int>(i));
    if (t.ok()) {
      crdt[i] = *t;
      if (t->crdt != decltype(t->crdt){}) {
        err << "pathwise: path " << group->paths[i].name
            << ": Command Retry Delay Times " << t->crdt[0] * 100 << "/"
            << t->crdt[1] * 100 << "/" << t->crdt[2] * 100 << " ms\n";
      }
    } else {
      err << "pathwise: path " << group->paths[i].name
          << ": no Command Retry Delay Times (" << t.status().message()
          << "); its retries are not delayed\n";
    }
  }
  (*backend)->SetWriteFences(WriteFences(o, *group, crdt, err));
  (*backend)->SetRetryDelayTimes(std::move(crdt));
  AnaMonitor ana((*backend)->paths(), std::move(nsids), std::move(names),
                 ana_source,
                 {.interval = o.ana_interval,
                  .log =
                      [&](const std::string& line) {
                        absl::MutexLock l(&log_mu);
                        err << "pathwise: " << line << "\n";
                      },
                  .clock = [b = backend->get()] { return b->Now(); }});
  ana.Start();

  ublk::DeviceOptions dopt;
  dopt.control_path = o.ublk_control;
  dopt.dev_dir = o.dev_dir;
  dopt.queues = o.queues;
  dopt.depth = o.depth;
  dopt.scheduler = o.scheduler;
  dopt.sysfs_root = o.sysfs_root;
  dopt.max_io_bytes = (*backend)->max_io_bytes();
  dopt.user_recovery = o.user_recovery;
  dopt.recover_dev_id = o.recover_dev_id;
  if (o.recover_dev_id >= 0) {
    // The dead server's writes may still be out on a path: the device's
    // held I/O (those writes reissued among it) and newer writes to the
    // same blocks wait until the kernel has ended them and the write fence
    // has passed, as a failover does (failover.h, RecoveryHoldNs).
    // --write-fence 0s asks for no fence, and gets no hold.
    int64_t hold = 0;
    const collectors::SysfsReader sysfs(o.sysfs_root);
    for (size_t i = 0; i < group->paths.size(); ++i) {
      const NamespacePath& p = group->paths[i];
      // The queue's timeout, in milliseconds, is what the kernel ends a
      // passthru command of this namespace at.
      const int64_t timeout_ms =
          sysfs.ReadInt(absl::StrCat("block/", p.name, "/queue/io_timeout"))
              .value_or(-1);
      const int64_t path_hold =
          RecoveryHoldNs(timeout_ms > 0 ? timeout_ms * 1'000'000 : -1,
                         (*backend)->WriteFenceNs(static_cast<int>(i)));
      err << "pathwise: path " << p.name << ": a dead server's command ends "
          << (timeout_ms > 0
                  ? absl::StrCat("at the queue's timeout (", timeout_ms, " ms)")
                  : std::string("at the kernel's default "
                                "timeout (30 s assumed)"))
          << ", then the write fence\n";
      hold = std::max(hold, path_hold);
    }
    if (o.write_fence && *o.write_fence == absl::ZeroDuration()) hold = 0;
    err << "pathwise: recovering ublk device " << o.recover_dev_id
        << " after the hold (" << hold / 1'000'000 << " ms)\n";
    absl::SleepFor(absl::Nanoseconds(hold));
  }
  absl::StatusOr<std::unique_ptr<ublk::Device>> device =
      ublk::Device::Create(dopt, **backend);
  if (!device.ok()) {
    const absl::Status& s = device.status();
    return Line(err,
                absl::IsFailedPrecondition(s) || absl::IsInvalidArgument(s)
                    ? kExitUsage
                    : kExitRuntime,
                std::string(s.message()));
  }
  const std::string block_path = (*device)->block_path();
  absl::StatusOr<std::unique_ptr<exporters::HttpServer>> endpoint =
      StartEndpoint(o, **backend, block_path.substr(block_path.rfind('/') + 1),
                    std::move(web));
  if (!endpoint.ok()) {
    (void)(*device)->Stop();
    return Line(err, kExitRuntime, std::string(endpoint.status().message()));
  }
  out << (*device)->block_path() << std::endl;
  {
    absl::MutexLock l(&log_mu);
    if (!(*device)->scheduler_status().ok()) {
      err << "pathwise: " << (*device)->block_path()
          << ": could not set the I/O scheduler to " << o.scheduler << " ("
          << (*device)->scheduler_status().message() << "); it serves with "
          << (*device)->scheduler() << "\n";
    }
    if (o.recover_dev_id >= 0) {
      err << "pathwise: recovered " << (*device)->block_path() << " (device "
          << o.recover_dev_id << ")\n";
    }
    err << "pathwise: serving " << (*device)->block_path() << " over "
        << group->paths.size() << " paths (" << PathNames(*group) << ") of "
        << group->id << ", policy " << policy::PolicyName(o.policy) << ", "
        << (*device)->queues() << " queues x " << (*device)->depth()
        << ", max I/O " << (*backend)->max_io_bytes() / 1024
        << " KiB, scheduler " << (*device)->scheduler();
    if (*endpoint != nullptr) {
      const std::vector<int> ports = (*endpoint)->ListeningPorts();
      err << ", metrics on " << o.listen_address << " (port "
          << (ports.empty() ? 0 : ports[0]) << ")";
    }
    err << "\n";
  }
  int sig = 0;
  sigwait(&signals, &sig);
  const absl::Status stopped = (*device)->Stop();
  ana.Stop();
  endpoint->reset();
  Summary(**backend, err);
  const ublk::QueueCounters c = (*device)->counters();
  err << "pathwise: removed " << (*device)->block_path() << ": " << c.requests
      << " block requests, " << c.failed << " failed, " << c.abandoned
      << " abandoned at shutdown\n";
  if (!stopped.ok())
    return Line(err, kExitRuntime, std::string(stopped.message()));
  return 0;
}

}  // namespace pathwise::datapath

// pathwise: the agent binary. See `pathwise --help`.
#include <bpf/libbpf.h>
#include <malloc.h>
#include <signal.h>
#include <sys/utsname.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <iostream>
#include <memory>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "agent/agent.h"
#include "agent/cli.h"
#include "agent/pipeline.h"
#include "agent/version.h"
#include "bpf/sampler.h"
#include "collectors/bpf_io_collector.h"
#include "collectors/nvme_iostats_collector.h"
#include "collectors/nvme_topology_collector.h"
#include "collectors/sysfs_namespace.h"
#include "collectors/sysfs_reader.h"
#include "control/iopolicy_actuator.h"
#include "control/iopolicy_file.h"
#include "control/prober.h"
#include "exporters/http_routes.h"
#include "exporters/http_server.h"
#include "exporters/prometheus_families.h"
#include "exporters/topology_json.h"
#include "exporters/topology_text.h"
#include "exporters/web_config.h"
#include "lab/lab_cli.h"
#include "model/snapshot_store.h"
#include "scoring/stage.h"
#include "spdlog/sinks/stdout_sinks.h"
#include "spdlog/spdlog.h"

namespace pathwise::agent {
namespace {

constexpr int kExitRuntime = 1;
constexpr int kExitUsage = 2;

void Fatal(const std::string& message) {
  std::fprintf(stderr, "pathwise: %s\n", message.c_str());
}

void SetUpLogging(const std::string& level) {
  // Logs go to stderr: stdout carries `snapshot`/`topology` output.
  auto logger = spdlog::stderr_logger_mt("pathwise");
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %L pathwise: %v");
  logger->set_level(spdlog::level::from_str(level));
  spdlog::set_default_logger(std::move(logger));
}

exporters::BuildInfo Build() {
  return exporters::BuildInfo{std::string(kVersion), std::string(kRevision)};
}

// libbpf's own messages (process-wide print hook) go to the debug log: the
// sampler's status already says what failed, in one line.
int LibbpfToDebugLog(enum libbpf_print_level level, const char* format,
                     va_list args) {
  if (level == LIBBPF_DEBUG && !spdlog::should_log(spdlog::level::debug)) {
    return 0;
  }
  char buf[1024];
  const int n = std::vsnprintf(buf, sizeof(buf), format, args);
  std::string line(buf, n < 0 ? 0 : std::min<size_t>(n, sizeof(buf) - 1));
  while (!line.empty() && line.back() == '\n') line.pop_back();
  spdlog::debug("libbpf: {}", line);
  return n;
}

std::string OneLine(absl::string_view message) {
  std::string out(message);
  std::replace(out.begin(), out.end(), '\n', ' ');
  return out;
}

// Adds the I/O source: the eBPF sampler unless --bpf=off or it cannot
// run, else the sysfs fallback. With --bpf=required an unusable sampler is
// an error (returned); with --bpf=auto it is one log line.
absl::Status AddIoSource(const Options& o,
                         const collectors::SysfsReader& reader,
                         Pipeline& pipeline) {
  if (o.bpf != BpfMode::kOff) {
    libbpf_set_print(LibbpfToDebugLog);
    bpf::SamplerOptions so;
    so.enable_bpf_stats = o.bpf_stats;
    absl::StatusOr<std::unique_ptr<bpf::BpfSampler>> sampler =
        bpf::BpfSampler::Create(so);
    if (sampler.ok()) {
      spdlog::info("eBPF sampler attached ({}), devices={}{}",
                   (*sampler)->block_attach_mode(), o.devices,
                   o.bpf_stats ? ", BPF run-time stats on (costs)" : "");
      if ((*sampler)->init_context_hidden()) {
        spdlog::warn(
            "eBPF: this kernel does not run pathwise's programs while a "
            "thread of PID 1 is current; I/O completed there is not counted "
            "(pathwise_bpf_init_context_blind)");
      }
      pipeline.AddIoSource(std::make_unique<collectors::BpfIoCollector>(
          std::move(*sampler), o.devices == "all"
                                   ? collectors::DeviceScope::kAll
                                   : collectors::DeviceScope::kNvme));
      return absl::OkStatus();
    }
    const std::string why = OneLine(sampler.status().message());
    if (o.bpf == BpfMode::kRequired) {
      return absl::FailedPreconditionError(
          absl::StrCat("--bpf=required: eBPF sampler unavailable: ", why));
    }
    spdlog::warn("eBPF sampler unavailable, using sysfs I/O counters: {}", why);
  }
  pipeline.AddIoSource(
      std::make_unique<collectors::NvmeIoStatsCollector>(reader));
  return absl::OkStatus();
}

// The iopolicy actuator (control/) as a pipeline stage.
class IopolicyActuatorStage : public Actuator {
 public:
  explicit IopolicyActuatorStage(
      std::unique_ptr<control::IopolicyActuator> impl)
      : impl_(std::move(impl)) {}
  absl::string_view name() const override { return impl_->name(); }
  absl::Status Act(const model::Snapshot& published) override {
    return impl_->Act(published);
  }
  void Report(model::Snapshot& next) const override {
    next.actuator = impl_->Report();
  }
  void Stop() override { impl_->Stop(absl::Now()); }

 private:
  std::unique_ptr<control::IopolicyActuator> impl_;
};

// serve's actuators: the iopolicy actuator, also when off (it then only
// exports its mode).
absl::Status AddActuators(const Options& o, Pipeline& pipeline) {
  absl::StatusOr<std::unique_ptr<control::IopolicyActuator>> actuator =
      control::IopolicyActuator::Create(
          o.actuate,
          std::make_unique<control::SysfsIopolicyFile>(o.sysfs_root));
  if (!actuator.ok()) return actuator.status();
  if (o.actuate.mode != model::ActuateMode::kOff) {
    spdlog::info(
        "iopolicy actuator: mode={} hold={} min_interval={} subsystems={} "
        "restore={}",
        o.actuate.mode == model::ActuateMode::kOn ? "on" : "dry-run",
        absl::FormatDuration(o.actuate.hold),
        absl::FormatDuration(o.actuate.min_interval), o.actuate.subsystems,
        o.actuate.restore);
  }
  pipeline.AddActuator(
      std::make_unique<IopolicyActuatorStage>(*std::move(actuator)));
  return absl::OkStatus();
}

// serve: the controller prober as one more I/O source, unless
// --probe_interval=0 or the topology is not this system's (a --sysfs_root
// other than /sys: /dev holds other controllers). A prober that cannot
// start (no io_uring) is one log line, not a failure.
void AddProber(const Options& o, Pipeline& pipeline) {
  if (o.command != Command::kServe) return;
  if (o.probe_interval <= absl::ZeroDuration()) {
    spdlog::info("controller probes off (--probe_interval=0)");
    return;
  }
  if (o.sysfs_root != "/sys") {
    spdlog::info(
        "controller probes off: --sysfs_root={} is not this "
        "system's /sys",
        o.sysfs_root);
    return;
  }
  control::ProberOptions po;
  po.interval = o.probe_interval;
  po.timeout = o.probe_timeout;
  absl::StatusOr<std::unique_ptr<control::ProbeRing>> ring =
      control::MakeUringProbeRing(po);
  if (!ring.ok()) {
    spdlog::warn("controller probes unavailable: {}",
                 OneLine(ring.status().message()));
    return;
  }
  spdlog::info("controller probes every {}, timeout {}",
               absl::FormatDuration(po.interval),
               absl::FormatDuration(po.timeout));
  pipeline.AddIoSource(
      std::make_unique<control::Prober>(std::move(po), *std::move(ring)));
}

// Sets up the pipeline's stages: topology, I/O (and probes), scoring. The
// actuators are serve's (AddActuators).
absl::Status SetUpPipeline(const Options& o, Pipeline& pipeline) {
  const collectors::SysfsReader reader(o.sysfs_root);
  pipeline.SetTopologySource(
      std::make_unique<collectors::NvmeTopologyCollector>(reader));
  if (absl::Status s = AddIoSource(o, reader, pipeline); !s.ok()) return s;
  AddProber(o, pipeline);
  scoring::ScoringOptions so;
  so.config = o.scoring;
  so.interval = o.interval;
  struct utsname u;
  so.kernel_has_queue_depth =
      o.kernel_queue_depth.has_value()
          ? *o.kernel_queue_depth
          : uname(&u) != 0 || scoring::KernelHasQueueDepth(u.release);
  pipeline.SetScoring(std::make_unique<scoring::ScoringStage>(so));
  return absl::OkStatus();
}

const model::Scoring* Scoring(const model::Snapshot& snap) {
  return snap.scoring ? &*snap.scoring : nullptr;
}

int Serve(const Options& o) {
  // Block SIGINT/SIGTERM/SIGHUP before any thread starts so only sigwait()
  // sees them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  // The stages are set up after the port is bound: a busy port fails fast,
  // before any BPF program is loaded.
  Pipeline pipeline;
  model::SnapshotStore store;
  Agent agent(pipeline, store, o.interval);

  exporters::WebConfig web;
  if (!o.web_config_file.empty()) {
    absl::StatusOr<exporters::WebConfig> loaded =
        exporters::LoadWebConfig(o.web_config_file);
    if (!loaded.ok()) {
      Fatal(absl::StrCat("--web.config.file ",
                         OneLine(loaded.status().message())));
      return kExitUsage;
    }
    web = *std::move(loaded);
  }
  absl::StatusOr<std::unique_ptr<exporters::HttpServer>> server =
      exporters::HttpServer::Start(
          o.listen_address,
          exporters::MakeAgentRoutes(
              store, [&agent] { return agent.Health(); }, Build()),
          exporters::HttpServerOptions{.web = std::move(web)});
  if (!server.ok()) {
    Fatal(std::string(server.status().message()));
    return kExitRuntime;
  }
  if (absl::Status s = SetUpPipeline(o, pipeline); !s.ok()) {
    Fatal(std::string(s.message()));
    return kExitRuntime;
  }
  if (absl::Status s = AddActuators(o, pipeline); !s.ok()) {
    Fatal(std::string(s.message()));
    return kExitRuntime;
  }
  std::vector<int> ports = (*server)->ListeningPorts();
  spdlog::info("pathwise {} serving on {} (port {}), interval {}, sysfs {}",
               kVersion, o.listen_address, ports.empty() ? 0 : ports[0],
               absl::FormatDuration(o.interval), o.sysfs_root);

  absl::Notification stop;
  std::thread loop([&] {
    absl::Time next = absl::Now();
    do {
      agent.CollectOnce();
      next += o.interval;
      const absl::Time now = absl::Now();
      if (next < now) next = now;  // fell behind: do not burst
    } while (!stop.WaitForNotificationWithTimeout(next - absl::Now()));
  });

  int sig = 0;
  // SIGHUP conventionally asks a daemon to reload its configuration (and a
  // closed terminal sends it): pathwise has none besides its flags, so it
  // says so and keeps serving, where the default action would end it
  // without a word.
  while (sigwait(&signals, &sig) == 0 && sig == SIGHUP) {
    spdlog::warn(
        "received SIGHUP: ignored (no configuration to reload; restart "
        "pathwise to change its flags)");
  }
  spdlog::info("received signal {}, shutting down", sig);
  stop.Notify();
  loop.join();
  // The actuators undo their changes (--actuate_restore) while the server
  // still serves, so the restores are counted where a scrape can see them.
  agent.Shutdown();
  server->reset();
  return 0;
}

// The one-shot subcommands: stages as `serve` has them, then `print`
// (which collects through the agent and writes to stdout); exit status 0
// unless stdout failed.
template <typename Print>
int OneShot(const Options& o, Print print) {
  Pipeline pipeline;
  if (absl::Status s = SetUpPipeline(o, pipeline); !s.ok()) {
    Fatal(std::string(s.message()));
    return kExitRuntime;
  }
  model::SnapshotStore store;
  Agent agent(pipeline, store, o.interval);
  try {
    print(agent);
  } catch (const std::exception& e) {
    // Nothing in the views is meant to throw (bad strings are repaired, see
    // exporters/utf8.h); should something still do, fail with one line
    // instead of std::terminate.
    Fatal(absl::StrCat("cannot print the output: ", e.what()));
    return kExitRuntime;
  }
  std::cout.flush();
  return std::cout.good() ? 0 : kExitRuntime;
}

int Snapshot(const Options& o) {
  return OneShot(o, [&o](Agent& agent) {
    const absl::Time end = absl::Now() + o.duration;
    std::shared_ptr<const model::Snapshot> snap = agent.CollectOnce();
    while (absl::Now() < end) {
      absl::SleepFor(std::min(o.interval, end - absl::Now()));
      snap = agent.CollectOnce();
    }
    if (o.format == "json") {
      std::cout << exporters::JsonText(exporters::SnapshotToJson(*snap));
    } else {
      std::cout << exporters::SerializeText(
          exporters::BuildFamilies(snap.get(), Build()));
    }
  });
}

int Topology(Options o) {
  o.bpf = BpfMode::kOff;  // the tree needs no I/O statistics
  return OneShot(o, [&o](Agent& agent) {
    std::shared_ptr<const model::Snapshot> snap = agent.CollectOnce();
    if (o.format == "json") {
      std::cout << exporters::JsonText(
          exporters::TopologyToJson(snap->topology, Scoring(*snap)));
    } else {
      std::cout << exporters::TopologyToText(snap->topology, Scoring(*snap));
    }
  });
}

int Main(int argc, char** argv) {
  absl::StatusOr<Options> opts =
      ParseArgs(std::vector<std::string>(argv + 1, argv + argc));
  if (!opts.ok()) {
    Fatal(std::string(opts.status().message()));
    return kExitUsage;
  }
  const Options& o = *opts;
  switch (o.command) {
    case Command::kHelp:
      std::cout << o.help;
      return 0;
    case Command::kVersion:
      std::cout << "pathwise " << kVersion << " (revision " << kRevision
                << ")\n";
      return 0;
    case Command::kLab:
      // A simulator: shares none of the agent's flags, logging or sysfs.
      return lab::RunLab(o.lab, std::cout, std::cerr);
    default:
      break;
  }
  SetUpLogging(o.log_level);
  // Must happen before any thread starts.
  if (absl::Status s = collectors::PresentSysfsRoot(o.sysfs_root); !s.ok()) {
    Fatal(std::string(s.message()));
    return kExitRuntime;
  }
  switch (o.command) {
    case Command::kSnapshot:
      return Snapshot(o);
    case Command::kTopology:
      return Topology(o);
    default:
      return Serve(o);
  }
}

}  // namespace
}  // namespace pathwise::agent

int main(int argc, char** argv) {
  // The HTTP server runs 128 worker threads, and glibc gives threads their
  // own malloc arenas (up to 8 per core): RSS crept up as scrapes landed on
  // workers that had not served one yet (11 to 20.7 MB over a 4-minute
  // soak, 1 scrape/s). Two arenas keep it flat.
  mallopt(M_ARENA_MAX, 2);
  return pathwise::agent::Main(argc, argv);
}

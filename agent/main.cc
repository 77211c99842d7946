// pathwise: the agent binary. See `pathwise --help`.
#include <signal.h>
#include <sys/utsname.h>

#include <algorithm>
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
#include "agent/version.h"
#include "collectors/nvme_iostats_collector.h"
#ifdef PATHWISE_HAVE_BPF
#include <bpf/libbpf.h>

#include <cstdarg>

#include "collectors/bpf_io_collector.h"
#include "bpf/sampler.h"
#endif
#include "collectors/nvme_topology_collector.h"
#include "collectors/scoring_collector.h"
#include "collectors/sysfs_namespace.h"
#include "collectors/sysfs_reader.h"
#include "exporters/http_server.h"
#include "exporters/prometheus_families.h"
#include "exporters/topology_json.h"
#include "exporters/topology_text.h"
#include "lab/lab_cli.h"
#include "model/snapshot_store.h"
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

#ifdef PATHWISE_HAVE_BPF
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
#endif

std::string OneLine(absl::string_view message) {
  std::string out(message);
  std::replace(out.begin(), out.end(), '\n', ' ');
  return out;
}

// Adds the I/O collector: the eBPF sampler unless --bpf=off or it cannot
// run, else the sysfs fallback. With --bpf=required an unusable sampler is
// an error (returned); with --bpf=auto it is one log line.
absl::Status AddIoCollector(const Options& o,
                            const collectors::SysfsReader& reader,
                            collectors::CollectorRegistry& registry) {
  if (o.bpf != BpfMode::kOff) {
#ifdef PATHWISE_HAVE_BPF
    libbpf_set_print(LibbpfToDebugLog);
    bpf::SamplerOptions so;
    so.enable_bpf_stats = o.bpf_stats;
    absl::StatusOr<std::unique_ptr<bpf::BpfSampler>> sampler =
        bpf::BpfSampler::Create(so);
    if (sampler.ok()) {
      spdlog::info("eBPF sampler attached ({}), devices={}{}",
                   (*sampler)->block_attach_mode(), o.devices,
                   o.bpf_stats ? ", BPF run-time stats on (costs)" : "");
      registry.Add(std::make_unique<collectors::BpfIoCollector>(
          std::move(*sampler), o.devices == "all"
                                   ? collectors::DeviceScope::kAll
                                   : collectors::DeviceScope::kNvme));
      return absl::OkStatus();
    }
    const std::string why = OneLine(sampler.status().message());
#else
    const std::string why = "this build has no eBPF sampler";
#endif
    if (o.bpf == BpfMode::kRequired) {
      return absl::FailedPreconditionError(
          absl::StrCat("--bpf=required: eBPF sampler unavailable: ", why));
    }
    spdlog::warn("eBPF sampler unavailable, using sysfs I/O counters: {}", why);
  }
  registry.Add(std::make_unique<collectors::NvmeIoStatsCollector>(reader));
  return absl::OkStatus();
}

absl::Status AddCollectors(const Options& o,
                           collectors::CollectorRegistry& registry) {
  const collectors::SysfsReader reader(o.sysfs_root);
  registry.Add(std::make_unique<collectors::NvmeTopologyCollector>(reader));
  if (absl::Status s = AddIoCollector(o, reader, registry); !s.ok()) return s;
  // The scoring stage reads what the collectors above wrote.
  collectors::ScoringOptions so;
  so.config = o.scoring;
  so.interval = o.interval;
  struct utsname u;
  so.kernel_has_queue_depth =
      uname(&u) != 0 || collectors::KernelHasQueueDepth(u.release);
  registry.Add(std::make_unique<collectors::ScoringCollector>(so));
  registry.InitAll();
  return absl::OkStatus();
}

const model::Scoring* Scoring(const model::Snapshot& snap) {
  return snap.scoring ? &*snap.scoring : nullptr;
}

std::string LandingPage() {
  return absl::StrCat(
      "<!DOCTYPE html>\n<html><head><title>pathwise</title></head><body>\n"
      "<h1>pathwise</h1>\n<p>Every path of Linux NVMe native multipath, "
      "visible. Version ",
      kVersion, " (", kRevision,
      ").</p>\n<ul>\n"
      "<li><a href=\"/metrics\">/metrics</a>: Prometheus metrics</li>\n"
      "<li><a href=\"/healthz\">/healthz</a>: health</li>\n"
      "<li><a href=\"/api/v1/topology\">/api/v1/topology</a>: topology "
      "(JSON)</li>\n</ul>\n</body></html>\n");
}

int Serve(const Options& o) {
  // Block SIGINT/SIGTERM before any thread starts so only sigwait() sees them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  // Collectors are added after the port is bound: a busy port fails fast,
  // before any BPF program is loaded.
  collectors::CollectorRegistry registry;
  model::SnapshotStore store;
  Agent agent(registry, store, o.interval);
  const exporters::SnapshotCollectable collectable(store, Build());

  exporters::HttpRoutes routes;
  routes["/metrics"] = [&collectable] {
    return exporters::HttpResponse{
        200, exporters::kTextContentType,
        exporters::SerializeText(collectable.Collect())};
  };
  routes["/healthz"] = [&agent] { return agent.Healthz(); };
  routes["/api/v1/topology"] = [&store] {
    std::shared_ptr<const model::Snapshot> snap = store.Load();
    if (snap == nullptr) {
      return exporters::HttpResponse{503, "application/json",
                                     "{\"error\":\"no collection yet\"}\n"};
    }
    return exporters::HttpResponse{
        200, "application/json",
        exporters::TopologyToJson(snap->topology, Scoring(*snap)).dump(2) +
            "\n"};
  };
  routes["/"] = [] {
    return exporters::HttpResponse{200, "text/html; charset=utf-8",
                                   LandingPage()};
  };

  absl::StatusOr<std::unique_ptr<exporters::HttpServer>> server =
      exporters::HttpServer::Start(o.listen_address, std::move(routes));
  if (!server.ok()) {
    Fatal(std::string(server.status().message()));
    return kExitRuntime;
  }
  if (absl::Status s = AddCollectors(o, registry); !s.ok()) {
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
  sigwait(&signals, &sig);
  spdlog::info("received signal {}, shutting down", sig);
  stop.Notify();
  loop.join();
  server->reset();
  return 0;
}

// The one-shot subcommands: collectors as `serve` has them, then `print`
// (which collects through the agent and writes to stdout); exit status 0
// unless stdout failed.
template <typename Print>
int OneShot(const Options& o, Print print) {
  collectors::CollectorRegistry registry;
  if (absl::Status s = AddCollectors(o, registry); !s.ok()) {
    Fatal(std::string(s.message()));
    return kExitRuntime;
  }
  model::SnapshotStore store;
  Agent agent(registry, store, o.interval);
  print(agent);
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
      std::cout << exporters::SnapshotToJson(*snap).dump(2) << "\n";
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
      std::cout
          << exporters::TopologyToJson(snap->topology, Scoring(*snap)).dump(2)
          << "\n";
    } else {
      std::cout << exporters::TopologyToText(snap->topology, Scoring(*snap));
    }
  });
}

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  // `pathwise lab` parses its own flags (lab/lab_cli.h): it is a simulator
  // and shares none of the agent's.
  if (!args.empty() && args[0] == "lab") {
    return lab::RunLab({args.begin() + 1, args.end()}, std::cout, std::cerr);
  }
  absl::StatusOr<Options> opts = ParseArgs(args);
  if (!opts.ok()) {
    Fatal(std::string(opts.status().message()));
    return kExitUsage;
  }
  const Options& o = *opts;
  if (o.command == Command::kHelp) {
    std::cout << HelpText();
    return 0;
  }
  if (o.command == Command::kVersion) {
    std::cout << "pathwise " << kVersion << " (revision " << kRevision << ")\n";
    return 0;
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

int main(int argc, char** argv) { return pathwise::agent::Main(argc, argv); }

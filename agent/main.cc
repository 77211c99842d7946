// pathwise: the agent binary. See `pathwise --help`.
#include <signal.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "agent/agent.h"
#include "agent/cli.h"
#include "agent/version.h"
#include "collectors/nvme_iostats_collector.h"
#include "collectors/nvme_topology_collector.h"
#include "collectors/sysfs_namespace.h"
#include "collectors/sysfs_reader.h"
#include "exporters/http_server.h"
#include "exporters/prometheus_families.h"
#include "exporters/topology_json.h"
#include "exporters/topology_text.h"
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

void AddCollectors(const Options& o, collectors::CollectorRegistry& registry) {
  const collectors::SysfsReader reader(o.sysfs_root);
  registry.Add(std::make_unique<collectors::NvmeTopologyCollector>(reader));
  // Issue 4 hooks in here: with --bpf=auto|required and a loadable sampler,
  // the BPF collector is added instead of (or after) the sysfs fallback.
  registry.Add(std::make_unique<collectors::NvmeIoStatsCollector>(reader));
  registry.InitAll();
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

  collectors::CollectorRegistry registry;
  AddCollectors(o, registry);
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
        exporters::TopologyToJson(snap->topology).dump(2) + "\n"};
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

int Snapshot(const Options& o) {
  collectors::CollectorRegistry registry;
  AddCollectors(o, registry);
  model::SnapshotStore store;
  Agent agent(registry, store, o.interval);
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
  std::cout.flush();
  return std::cout.good() ? 0 : kExitRuntime;
}

int Topology(const Options& o) {
  collectors::CollectorRegistry registry;
  AddCollectors(o, registry);
  model::SnapshotStore store;
  Agent agent(registry, store, o.interval);
  std::shared_ptr<const model::Snapshot> snap = agent.CollectOnce();
  if (o.format == "json") {
    std::cout << exporters::TopologyToJson(snap->topology).dump(2) << "\n";
  } else {
    std::cout << exporters::TopologyToText(snap->topology);
  }
  std::cout.flush();
  return std::cout.good() ? 0 : kExitRuntime;
}

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
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
  if (o.bpf == BpfMode::kRequired) {
    // Until the sampler (issue 4) lands there is no BPF to require.
    Fatal("--bpf=required: this build has no eBPF sampler");
    return kExitRuntime;
  }
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

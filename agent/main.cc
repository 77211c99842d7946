// SPDX-License-Identifier: Apache-2.0
// pathwise: the agent binary. See `pathwise --help`.
#include <bpf/libbpf.h>
#include <malloc.h>
#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "agent/agent.h"
#include "agent/cli.h"
#include "agent/log_format.h"
#include "agent/pipeline.h"
#include "agent/stages.h"
#include "agent/version.h"
#include "bpf/sampler.h"
#include "collectors/queue_hctx.h"
#include "collectors/queue_source.h"
#include "collectors/sysfs_namespace.h"
#include "control/queue_plan.h"
#include "datapath/datapath_cli.h"
#include "exporters/http_routes.h"
#include "exporters/http_server.h"
#include "exporters/prometheus_families.h"
#include "exporters/queues_view.h"
#include "exporters/topology_json.h"
#include "exporters/topology_text.h"
#include "exporters/web_config.h"
#include "lab/lab_cli.h"
#include "model/snapshot_store.h"
#include "spdlog/sinks/stdout_sinks.h"
#include "spdlog/spdlog.h"
#include "ui/source.h"
#include "ui/top.h"

namespace pathwise::agent {
namespace {

constexpr int kExitRuntime = 1;
constexpr int kExitUsage = 2;

void Fatal(const std::string& message) {
  std::fprintf(stderr, "pathwise: %s\n", message.c_str());
}

void SetUpLogging(const Options& o) {
  // Logs go to stderr: stdout carries `snapshot`/`topology` output.
  auto logger = spdlog::stderr_logger_mt("pathwise");
  logger->set_formatter(MakeLogFormatter(o.log_format));
  logger->set_level(spdlog::level::from_str(o.log_level));
  spdlog::set_default_logger(std::move(logger));
  for (const std::string& note : o.deprecated_flags) spdlog::warn("{}", note);
}

// The man page's date: SOURCE_DATE_EPOCH's (reproducible builds set it),
// else today's, in UTC.
std::string ManDate() {
  absl::Time t = absl::Now();
  int64_t epoch = 0;
  if (const char* s = std::getenv("SOURCE_DATE_EPOCH");
      s != nullptr && absl::SimpleAtoi(s, &epoch)) {
    t = absl::FromUnixSeconds(epoch);
  }
  return absl::FormatTime("%Y-%m-%d", t, absl::UTCTimeZone());
}

exporters::BuildInfo Build() {
  return exporters::BuildInfo{std::string(kVersion), std::string(kRevision)};
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
  auto http_counters = std::make_shared<exporters::HttpServerCounters>();
  absl::StatusOr<std::unique_ptr<exporters::HttpServer>> server =
      exporters::HttpServer::Start(
          o.listen_address,
          exporters::MakeAgentRoutes(
              store, [&agent] { return agent.Health(); }, Build(),
              ExpositionOf(o), http_counters),
          exporters::HttpServerOptions{
              .max_connections = o.web_max_connections,
              .max_connections_per_client = o.web_max_connections_per_client,
              .web = std::move(web),
              .counters = http_counters});
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
  // The actuators undo their changes (--actuate-restore) while the server
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
          exporters::BuildFamilies(snap.get(), Build(), ExpositionOf(o)));
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

// `pathwise queues`: one reading of the NVMe/TCP queue map, printed; with
// --plan, the commands that would align it.
int Queues(const Options& o) {
  // libbpf's own lines would interleave with the output; a failed load is
  // reported in the map (bpf.unknown) with the verifier's tail.
  if (o.log_level != "debug") libbpf_set_print(nullptr);
  // PresentSysfsRoot put --path.sysfs at /sys.
  // Per hardware queue I/O: the block sampler counts over --interval
  // while the map is read.
  std::unique_ptr<bpf::BpfSampler> sampler;
  std::string hctx_unknown = "BPF off";
  if (o.bpf != BpfMode::kOff && !o.queues_plan) {
    bpf::SamplerOptions so;
    so.nvme = false;
    const collectors::SysfsReader sys("/sys");
    so.io_slots = bpf::IoSlotsFor(collectors::CountDisks(sys));
    so.hctx_slots = bpf::HctxSlotsFor(collectors::CountHctxs(sys));
    absl::StatusOr<std::unique_ptr<bpf::BpfSampler>> s =
        bpf::BpfSampler::Create(so);
    if (s.ok()) {
      sampler = *std::move(s);
    } else {
      hctx_unknown = OneLine(s.status().message());
    }
  }
  const absl::Time start = absl::Now();
  collectors::QueueSource source(collectors::QueueScanRoots{},
                                 o.bpf != BpfMode::kOff);
  model::QueueMap m = source.Collect();
  if (sampler) {
    absl::SleepFor(o.interval - (absl::Now() - start));
    absl::StatusOr<bpf::SamplerSnapshot> s = sampler->Read();
    m.hctx_window_seconds = absl::ToDoubleSeconds(absl::Now() - start);
    if (s.ok()) {
      m.hctx_io = true;
      m.path_hctx = collectors::HctxByPath(*s);
      m.hctx_dropped = s->dropped_hctx;
      collectors::AddHctxCpus(collectors::SysfsReader("/sys"), m.path_hctx);
    } else {
      m.hctx_io_unknown = OneLine(s.status().message());
    }
  } else {
    m.hctx_io_unknown = hctx_unknown;
  }
  if (o.bpf == BpfMode::kRequired && !m.bpf_queues && !m.controllers.empty()) {
    Fatal(absl::StrCat("--bpf=required: ", m.bpf_unknown));
    return kExitRuntime;
  }
  if (o.queues_plan) {
    std::vector<std::string> notes;
    const std::vector<control::PlanStep> steps =
        control::BuildQueuePlan(m, &notes);
    if (o.format == "json") {
      nlohmann::json j = {{"steps", nlohmann::json::array()}, {"notes", notes}};
      for (const control::PlanStep& s : steps) {
        j["steps"].push_back({{"command", s.command}, {"why", s.why}});
      }
      std::cout << exporters::JsonText(j);
    } else {
      for (const control::PlanStep& s : steps) {
        std::cout << "# " << s.why << "\n" << s.command << "\n";
      }
      for (const std::string& n : notes) std::cout << "# note: " << n << "\n";
      if (steps.empty()) std::cout << "# nothing to change\n";
    }
  } else if (o.format == "json") {
    std::cout << exporters::JsonText(exporters::QueueMapToJson(m));
  } else {
    std::cout << exporters::QueueMapToText(m);
  }
  std::cout.flush();
  return std::cout.good() ? 0 : kExitRuntime;
}

// `pathwise top` without an agent: the snapshot pipeline of `snapshot`,
// collecting once per Next().
class LocalSource : public ui::SnapshotSource {
 public:
  LocalSource(const Options& o, std::string describe)
      : agent_(pipeline_, store_, o.interval), describe_(std::move(describe)) {}
  absl::Status SetUp(const Options& o) { return SetUpPipeline(o, pipeline_); }
  absl::StatusOr<std::shared_ptr<const model::Snapshot>> Next() override {
    return agent_.CollectOnce();
  }
  std::string Describe() const override { return describe_; }

 private:
  Pipeline pipeline_;
  model::SnapshotStore store_;
  Agent agent_;
  std::string describe_;
};

int Top(const Options& o) {
  ui::TopOptions t = o.top;
  const bool one_frame = t.once || t.format == "json";
  if (one_frame && t.width == 0) t.width = ui::StdoutColumns();
  absl::StatusOr<std::unique_ptr<ui::HttpSnapshotSource>> http =
      ui::HttpSnapshotSource::Create(
          t.url, std::clamp(t.interval, absl::Seconds(2), absl::Seconds(10)));
  if (!http.ok()) {
    Fatal(std::string(http.status().message()));
    return kExitUsage;
  }
  std::unique_ptr<ui::SnapshotSource> source = *std::move(http);
  // An explicit --url must answer; the default one is only the first
  // choice: with nothing listening there, top samples by itself.
  if (!t.url_given) {
    absl::StatusOr<std::shared_ptr<const model::Snapshot>> probe =
        source->Next();
    if (!probe.ok() &&
        probe.status().code() == absl::StatusCode::kUnavailable) {
      auto local = std::make_unique<LocalSource>(
          o, absl::StrCat("local sampling (no agent at ", t.url, ")"));
      if (absl::Status s = local->SetUp(o); !s.ok()) {
        Fatal(absl::StrCat("no agent at ", t.url,
                           " and local sampling failed: ", s.message()));
        return kExitRuntime;
      }
      source = std::move(local);
    }
  }
  try {
    if (one_frame) return ui::RunOnce(t, *source, std::cout, std::cerr);
    // Log lines would be drawn over the screen; a failing stage is shown
    // in the view itself.
    spdlog::default_logger()->set_level(spdlog::level::off);
    return ui::RunLive(t, *source, std::cerr);
  } catch (const std::exception& e) {
    Fatal(absl::StrCat("top: ", e.what()));
    return kExitRuntime;
  }
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
      std::cout << (o.help_man ? ManPage(kVersion, ManDate()) : o.help);
      return 0;
    case Command::kVersion:
      std::cout << "pathwise " << kVersion << " (revision " << kRevision
                << ")\n";
      return 0;
    case Command::kLab:
      // A simulator: shares none of the agent's flags, logging or sysfs.
      return lab::RunLab(o.lab, std::cout, std::cerr);
    case Command::kDatapath:
      // Its own checks, devices and signal handling (datapath/), and no
      // logger: its lines go to stderr as they are.
      {
        for (const std::string& note : o.datapath_flags.deprecated) {
          std::cerr << "pathwise: warning: " << note << "\n";
        }
        datapath::DatapathOptions d = o.datapath;
        d.version = std::string(kVersion);
        d.revision = std::string(kRevision);
        return datapath::RunDatapath(d, std::cout, std::cerr);
      }
    default:
      break;
  }
  SetUpLogging(o);
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
    case Command::kQueues:
      return Queues(o);
    case Command::kTop:
      return Top(o);
    default:
      return Serve(o);
  }
}

}  // namespace
}  // namespace pathwise::agent

int main(int argc, char** argv) {
  // glibc gives threads their own malloc arenas (up to 8 per core), and
  // RSS crept up as scrapes landed on threads that had not served one yet
  // (11 to 20.7 MB over a 4-minute soak with the former thread-per-
  // connection server). Two arenas keep that away.
  mallopt(M_ARENA_MAX, 2);
  // The HTTP server holds an idle connection for a descriptor; the soft
  // limit (often 1024) would cap it below --web.max-connections. Raised to
  // the hard limit, as Go's runtime does for every Go exporter.
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 &&
      files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }
  return pathwise::agent::Main(argc, argv);
}

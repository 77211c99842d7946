// SPDX-License-Identifier: Apache-2.0
// Scrape load: the agent's HTTP server with its real routes on the 256-path
// synthetic topology (4 subsystems x 16 heads x 4 paths), scraped on
// /metrics by many concurrent clients. The server runs in a child process so
// that its peak RSS (VmHWM) is the server's alone, not the clients' buffers.
//
//   bench_scrape_load [--clients N] [--seconds S] [--out FILE]
//                     [--event_threads N] [--handler_threads N] [--gzip yes|no]
//
// Prints (and writes to FILE) scrapes, failures, p50/p99/max scrape time and
// the server's peak RSS and thread count; exits 1 if any scrape failed. Run
// via the bench_scrape_load_txt target (64 clients x 30 s), which writes
// bench/results/scrape_load.txt.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "bench/scrape_load_client.h"
#include "exporters/http_routes.h"
#include "exporters/http_server.h"
#include "model/snapshot_store.h"
#include "model/synthetic.h"

namespace pathwise {
namespace {

// The child: serve until SIGTERM. Writes the bound port to `port_fd`.
[[noreturn]] void Serve(int port_fd,
                        const exporters::HttpServerOptions& options) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // inherited by the workers
  model::SnapshotStore store;
  const model::Snapshot synthetic =
      model::MakeSyntheticSnapshot({.subsystems = 4,
                                    .heads_per_subsystem = 16,
                                    .controllers_per_subsystem = 4});
  store.Publish(std::make_shared<model::Snapshot>(synthetic));
  model::Health healthy;
  healthy.ready = true;
  healthy.live = true;
  auto server = exporters::HttpServer::Start(
      "127.0.0.1:0",
      exporters::MakeAgentRoutes(store, [healthy] { return healthy; },
                                 {"bench", "bench"}),
      options);
  int port = 0;
  if (server.ok() && !(*server)->ListeningPorts().empty()) {
    port = (*server)->ListeningPorts()[0];
  } else {
    std::cerr << "server: " << server.status() << "\n";
  }
  if (write(port_fd, &port, sizeof(port)) != sizeof(port) || port == 0) {
    _exit(1);
  }
  // A new snapshot every second, as the agent publishes one per --interval:
  // /metrics is rendered once per snapshot, so this is the render cost a
  // real agent pays under the same load.
  std::atomic<bool> stop{false};
  std::thread publisher([&] {
    while (!stop.load()) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      store.Publish(std::make_shared<model::Snapshot>(synthetic));
    }
  });
  int sig = 0;
  sigwait(&set, &sig);
  stop = true;
  publisher.join();
  server->reset();
  _exit(0);
}

// User + system CPU seconds of `pid` so far (/proc/<pid>/stat).
double CpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), {});
  // Fields after the command name (which may hold spaces), from field 3.
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));
  std::string field;
  long utime = 0;
  long stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::strtol(field.c_str(), nullptr, 10);
    if (i == 15) stime = std::strtol(field.c_str(), nullptr, 10);
  }
  return static_cast<double>(utime + stime) / sysconf(_SC_CLK_TCK);
}

// "VmHWM:\t  12345 kB" → 12345 for `key` in /proc/<pid>/status.
long StatusField(pid_t pid, const std::string& key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) == 0) {
      return std::strtol(line.c_str() + key.size() + 1, nullptr, 10);
    }
  }
  return -1;
}

int Main(int argc, char** argv) {
  int clients = 64;
  int seconds = 30;
  std::string out;
  exporters::HttpServerOptions options;
  std::string gzip = "no";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if ((flag == "--clients" && absl::SimpleAtoi(value, &clients)) ||
        (flag == "--seconds" && absl::SimpleAtoi(value, &seconds)) ||
        (flag == "--event_threads" &&
         absl::SimpleAtoi(value, &options.event_threads)) ||
        (flag == "--handler_threads" &&
         absl::SimpleAtoi(value, &options.handler_threads))) {
      continue;
    }
    if (flag == "--out") {
      out = value;
      continue;
    }
    if (flag == "--gzip" && (value == "yes" || value == "no")) {
      gzip = value;
      continue;
    }
    std::cerr << "usage: bench_scrape_load [--clients N] [--seconds S] "
                 "[--out FILE] [--event_threads N] [--handler_threads N] "
                 "[--gzip yes|no]\n";
    return 2;
  }
  int fds[2];
  if (pipe(fds) != 0) return 1;
  const pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    close(fds[0]);
    Serve(fds[1], options);
  }
  close(fds[1]);
  int port = 0;
  if (read(fds[0], &port, sizeof(port)) != sizeof(port) || port == 0) {
    std::cerr << "the server did not start\n";
    waitpid(child, nullptr, 0);
    return 1;
  }
  const long rss_idle_kb = StatusField(child, "VmRSS");
  const double cpu0 = CpuSeconds(child);
  const bench::ScrapeLoadResult r =
      bench::RunScrapeLoad(port, "/metrics", clients,
                           std::chrono::seconds(seconds), 10000, gzip == "yes");
  const double server_cpu = CpuSeconds(child) - cpu0;
  const long hwm_kb = StatusField(child, "VmHWM");
  const long threads = StatusField(child, "Threads");
  kill(child, SIGTERM);
  int status = 0;
  waitpid(child, &status, 0);

  std::ostringstream report;
  report << absl::StrFormat(
      "# bench_scrape_load: %d clients scraping /metrics for %d s, 256-path "
      "synthetic topology, server in its own process on 127.0.0.1\n"
      "clients %d\nseconds %d\nbody_bytes %zu\nscrapes_ok %d\n"
      "scrapes_failed %d\nscrapes_per_second %.1f\np50_ms %.2f\n"
      "p99_ms %.2f\nmax_ms %.2f\nserver_rss_idle_kb %ld\n"
      "server_peak_rss_kb %ld\nserver_threads %ld\n"
      "server_cpu_seconds %.2f\nserver_cpu_ms_per_scrape %.3f\ngzip %s\n",
      clients, seconds, clients, seconds, r.body_bytes, r.ok, r.failed,
      static_cast<double>(r.ok) / seconds, r.QuantileMs(0.50),
      r.QuantileMs(0.99), r.latency_ms.empty() ? 0.0 : r.latency_ms.back(),
      rss_idle_kb, hwm_kb, threads, server_cpu,
      r.ok > 0 ? 1000 * server_cpu / static_cast<double>(r.ok) : 0.0,
      gzip.c_str());
  if (r.failed > 0) report << "first_failure " << r.first_failure << "\n";
  std::cout << report.str();
  if (!out.empty()) std::ofstream(out) << report.str();
  return r.failed == 0 && r.ok > 0 ? 0 : 1;
}

}  // namespace
}  // namespace pathwise

int main(int argc, char** argv) { return pathwise::Main(argc, argv); }

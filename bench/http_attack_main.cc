// SPDX-License-Identifier: Apache-2.0
// The HTTP server under attack (bench/http_attack.h), as a benchmark: the
// agent's routes on the 256-path synthetic topology, over plain HTTP and
// TLS; 1000 silent and 50 byte-by-byte connections from one address while
// a scraper fetches /metrics (gzip, a fresh connection each time) from
// another address, then from the attacker's own.
//
//   bench_http_attack [--scrapes N] [--out FILE] [--tls no|yes|both]
//                     [--scraper other|same|both] [--event_threads N]
//
// Prints (and writes to FILE) the scrape latency quantiles, failures and
// what the server closed; exits 1 if any scrape failed.
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/http_attack.h"
#include "exporters/http_routes.h"
#include "exporters/http_server.h"
#include "model/snapshot_store.h"
#include "model/synthetic.h"

namespace pathwise {
namespace {

int Main(int argc, char** argv) {
  int scrapes = 1000;
  std::string out;
  std::string tls_arg = "both";
  std::string scraper_arg = "both";
  int event_threads = exporters::HttpServerOptions{}.event_threads;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--scrapes" && absl::SimpleAtoi(argv[i + 1], &scrapes)) {
      continue;
    }
    if (flag == "--out") {
      out = argv[i + 1];
      continue;
    }
    if (flag == "--tls") {
      tls_arg = argv[i + 1];
      continue;
    }
    if (flag == "--event_threads" &&
        absl::SimpleAtoi(argv[i + 1], &event_threads)) {
      continue;
    }
    if (flag == "--scraper") {
      scraper_arg = argv[i + 1];
      continue;
    }
    std::cerr << "usage: bench_http_attack [--scrapes N] [--out FILE] "
                 "[--tls no|yes|both] [--scraper other|same|both] "
                 "[--event_threads N]\n";
    return 2;
  }
  rlimit files{};
  getrlimit(RLIMIT_NOFILE, &files);
  files.rlim_cur = files.rlim_max;
  setrlimit(RLIMIT_NOFILE, &files);
  char dir[] = "/tmp/pathwise-attack-XXXXXX";
  if (mkdtemp(dir) == nullptr) return 1;
  const std::string d = dir;
  if (std::system(absl::StrCat("openssl req -x509 -newkey ec -pkeyopt "
                               "ec_paramgen_curve:prime256v1 -nodes -days 1 "
                               "-subj /CN=localhost -keyout ",
                               d, "/k -out ", d, "/c 2>/dev/null")
                      .c_str()) != 0) {
    std::cerr << "openssl could not make a certificate\n";
    return 1;
  }
  model::SnapshotStore store;
  store.Publish(std::make_shared<model::Snapshot>(
      model::MakeSyntheticSnapshot({.subsystems = 4,
                                    .heads_per_subsystem = 16,
                                    .controllers_per_subsystem = 4})));
  model::Health healthy;
  healthy.ready = healthy.live = true;
  std::ostringstream report;
  report << absl::StrFormat(
      "# bench_http_attack: 1000 silent + 50 byte-by-byte connections from "
      "one address (reopened when closed); %d scrapes of /metrics (256 "
      "paths, gzip, a fresh connection and handshake each, every 50 ms). "
      "Server and clients in one process on 127.0.0.1, %ld CPUs.\n"
      "# %-5s %-8s %8s %8s %8s %8s %7s %9s %9s %9s\n",
      scrapes, sysconf(_SC_NPROCESSORS_ONLN), "tls", "scraper", "p50_ms",
      "p90_ms", "p99_ms", "max_ms", "failed", "attacker", "client_lim",
      "req_tmo");
  bool all_ok = true;
  for (bool tls : {false, true}) {
    if (tls_arg != "both" && tls_arg != (tls ? "yes" : "no")) continue;
    for (bool nat : {false, true}) {
      if (scraper_arg != "both" && scraper_arg != (nat ? "same" : "other")) {
        continue;
      }
      auto counters = std::make_shared<exporters::HttpServerCounters>();
      exporters::HttpServerOptions options;
      options.counters = counters;
      options.event_threads = event_threads;
      if (tls) {
        exporters::TlsServerConfig t;
        t.cert_file = d + "/c";
        t.key_file = d + "/k";
        options.web.tls = t;
      }
      auto server = exporters::HttpServer::Start(
          "127.0.0.1:0",
          exporters::MakeAgentRoutes(store, [healthy] { return healthy; },
                                     {"bench", "bench"}),
          options);
      if (!server.ok()) {
        std::cerr << server.status() << "\n";
        return 1;
      }
      bench::AttackConfig c;
      c.port = (*server)->ListeningPorts().at(0);
      c.tls = tls;
      c.attacker = "127.0.0.1";
      c.scraper = nat ? "127.0.0.1" : "127.0.0.2";
      c.scrapes = scrapes;
      const bench::AttackReport r = bench::RunAttack(c);
      all_ok = all_ok && r.failed == 0;
      const std::string line = absl::StrFormat(
          "  %-5s %-8s %8.2f %8.2f %8.2f %8.2f %7d %9d %9d %9d\n",
          tls ? "yes" : "no", nat ? "same" : "other", r.QuantileMs(0.5),
          r.QuantileMs(0.9), r.QuantileMs(0.99), r.QuantileMs(1), r.failed,
          static_cast<int>(r.attacker_connects),
          static_cast<int>(
              counters->Refused(exporters::RefuseReason::kClientLimit)),
          static_cast<int>(
              counters->Refused(exporters::RefuseReason::kRequestTimeout)));
      std::cout << line << std::flush;
      report << line;
      if (r.failed > 0) {
        report << "#   first failure: " << r.first_failure << "\n";
        std::cout << "#   first failure: " << r.first_failure << "\n";
      }
    }
  }
  report << "# attacker: connections the attacker opened; client_lim, "
            "req_tmo: connections the server closed for the per-address "
            "limit and the 2 s request deadline "
            "(pathwise_http_connections_refused_total).\n";
  std::system(absl::StrCat("rm -rf ", d).c_str());
  if (!out.empty()) std::ofstream(out) << report.str();
  return all_ok ? 0 : 1;
}

}  // namespace
}  // namespace pathwise

int main(int argc, char** argv) { return pathwise::Main(argc, argv); }

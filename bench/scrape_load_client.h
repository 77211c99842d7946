// SPDX-License-Identifier: Apache-2.0
// Concurrent scrapers for the HTTP server: `clients` threads each fetch one
// path over a fresh loopback connection in a loop, for a fixed time, and
// time every scrape. A scrape fails unless it answers 200 with exactly the
// Content-Length it announced, within the per-request timeout.
// Header-only so that bench/scrape_load.cc (the benchmark) and the unit
// tests' short functional run share it.
#ifndef PATHWISE_BENCH_SCRAPE_LOAD_CLIENT_H_
#define PATHWISE_BENCH_SCRAPE_LOAD_CLIENT_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace pathwise::bench {

struct ScrapeLoadResult {
  int64_t ok = 0;
  int64_t failed = 0;
  std::string first_failure;       // what the first failed scrape saw
  std::vector<double> latency_ms;  // of the successful scrapes, sorted
  size_t body_bytes = 0;           // of the last successful scrape

  // Nearest-rank quantile of the successful scrapes' latency, 0 if none.
  double QuantileMs(double q) const {
    if (latency_ms.empty()) return 0;
    const size_t rank = static_cast<size_t>(
        std::ceil(q * static_cast<double>(latency_ms.size())));
    return latency_ms[std::min(latency_ms.size() - 1,
                               rank == 0 ? 0 : rank - 1)];
  }
};

// One GET of `path` from 127.0.0.1:`port`, sent from the loopback address
// `from` (host order; 0: the kernel's choice, 127.0.0.1); "" on success
// (body size in *bytes), else why it failed.
inline std::string ScrapeOnce(int port, const std::string& path, int timeout_ms,
                              size_t* bytes, uint32_t from = 0,
                              bool gzip = false) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "socket failed";
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sockaddr_in source{};
  source.sin_family = AF_INET;
  source.sin_addr.s_addr = htonl(from);
  std::string err;
  if (from != 0 &&
      bind(fd, reinterpret_cast<sockaddr*>(&source), sizeof(source)) != 0) {
    err = "bind failed";
  } else if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) !=
             0) {
    err = "connect failed";
  } else {
    const std::string req =
        "GET " + path +
        " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n" +
        (gzip ? "Accept-Encoding: gzip\r\n" : "") + "\r\n";
    if (write(fd, req.data(), req.size()) != static_cast<ssize_t>(req.size())) {
      err = "write failed";
    } else {
      // One buffer per client thread, kept across scrapes: a fresh string
      // per scrape made glibc map, fault in and trim ~1 MB each time, which
      // took more CPU than the server (perf: the clients' memmove and page
      // faults, 55 % of the machine) and varied with the timing of the
      // answers, so the benchmark measured malloc more than the server.
      thread_local std::string resp;
      resp.clear();
      resp.reserve(1 << 21);
      char buf[65536];
      ssize_t n;
      while ((n = read(fd, buf, sizeof(buf))) > 0) resp.append(buf, n);
      const size_t end = resp.find("\r\n\r\n");
      const std::string cl = "Content-Length: ";
      const size_t at = resp.find(cl);
      if (n < 0) {
        err = "read timed out or failed after " + std::to_string(resp.size()) +
              " bytes";
      } else if (resp.rfind("HTTP/1.1 200 ", 0) != 0) {
        err = "status line: " + resp.substr(0, resp.find("\r\n"));
      } else if (end == std::string::npos || at == std::string::npos ||
                 at > end) {
        err = "no header end or no Content-Length";
      } else {
        const size_t want =
            std::strtoul(resp.c_str() + at + cl.size(), nullptr, 10);
        const size_t got = resp.size() - end - 4;
        if (got != want) {
          err = "body " + std::to_string(got) + " bytes, Content-Length " +
                std::to_string(want);
        } else {
          *bytes = got;
        }
      }
    }
  }
  close(fd);
  return err;
}

// `clients` concurrent scrapers, client c from the loopback address
// 127.0.1.(c + 1) (so up to 254), as that many scrapers on as many hosts:
// the server limits the connections of one address. With `gzip`, each asks
// for gzip as Prometheus does (the body is then the compressed one).
inline ScrapeLoadResult RunScrapeLoad(int port, const std::string& path,
                                      int clients,
                                      std::chrono::milliseconds duration,
                                      int timeout_ms = 10000,
                                      bool gzip = false) {
  using Clock = std::chrono::steady_clock;
  ScrapeLoadResult result;
  std::mutex mu;
  const Clock::time_point stop = Clock::now() + duration;
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, from = (127u << 24) | (1u << 8) |
                                    static_cast<uint32_t>(c % 254 + 1)] {
      std::vector<double> lat;
      int64_t failed = 0;
      std::string first;
      size_t bytes = 0;
      while (Clock::now() < stop) {
        const Clock::time_point t0 = Clock::now();
        std::string err =
            ScrapeOnce(port, path, timeout_ms, &bytes, from, gzip);
        const double ms =
            std::chrono::duration<double, std::milli>(Clock::now() - t0)
                .count();
        if (err.empty()) {
          lat.push_back(ms);
        } else {
          if (failed++ == 0) first = std::move(err);
        }
      }
      std::lock_guard<std::mutex> lock(mu);
      result.ok += static_cast<int64_t>(lat.size());
      result.failed += failed;
      if (result.first_failure.empty()) result.first_failure = first;
      if (!lat.empty()) result.body_bytes = bytes;
      result.latency_ms.insert(result.latency_ms.end(), lat.begin(), lat.end());
    });
  }
  for (std::thread& t : threads) t.join();
  std::sort(result.latency_ms.begin(), result.latency_ms.end());
  return result;
}

}  // namespace pathwise::bench

#endif  // PATHWISE_BENCH_SCRAPE_LOAD_CLIENT_H_

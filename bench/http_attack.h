// SPDX-License-Identifier: Apache-2.0
// An attack on an HTTP server, and a scraper timed through it: one client
// address holds `silent` connections that send nothing and `slow` ones
// that send a request (over TLS: a ClientHello) one byte at a time,
// reopening each as soon as the server closes it; meanwhile a scraper
// fetches a path `scrapes` times over fresh connections (TLS handshake
// included) from its own address, or from the attacker's (one NAT
// address for both). Shared by the unit test (tests/unit/exporters/
// http_attack_test.cc) and the benchmark (bench/http_attack_main.cc).
#ifndef PATHWISE_BENCH_HTTP_ATTACK_H_
#define PATHWISE_BENCH_HTTP_ATTACK_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace pathwise::bench {

struct AttackConfig {
  int port = 0;
  bool tls = false;
  std::string attacker = "127.0.0.1";  // any 127.0.0.0/8 address is local
  std::string scraper = "127.0.0.2";
  int silent = 1000;
  int slow = 50;
  std::chrono::milliseconds slow_byte_every{100};
  int scrapes = 100;
  std::chrono::milliseconds scrape_every{50};
  std::chrono::milliseconds scrape_timeout{5000};
  std::string path = "/metrics";
};

struct AttackReport {
  std::vector<double> latency_ms;  // successful scrapes, sorted
  int failed = 0;
  std::string first_failure;
  size_t body_bytes = 0;          // of the last successful scrape
  int silent_open = 0;            // attacker sockets open when scraping began
  int64_t attacker_connects = 0;  // connections the attacker opened
  int64_t closed_by_server = 0;   // of those, the ones the server closed

  // Nearest-rank quantile of the successful scrapes' latency; 0 if none.
  double QuantileMs(double q) const;
};

// Runs the attack and the scrapes; returns when the scrapes are done and
// the attacker's sockets are closed. Needs about 2 × (silent + slow)
// descriptors in this process when the server runs in it too.
AttackReport RunAttack(const AttackConfig& config);

}  // namespace pathwise::bench

#endif  // PATHWISE_BENCH_HTTP_ATTACK_H_

// SPDX-License-Identifier: Apache-2.0
// Fuzzes the agent's HTTP endpoint in process: the real HttpServer
// (libmicrohttpd) with the agent's routes (exporters/http_routes.h) over a
// snapshot, listening on loopback; each input is sent as is on a fresh
// connection, as a hostile client would (method, path, query, headers,
// bodies, binary junk). The server must answer or close within a bound,
// never crash, and what it answers must be an HTTP response.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"
#include "exporters/http_gzip.h"
#include "exporters/http_routes.h"
#include "exporters/http_server.h"
#include "model/health.h"
#include "model/snapshot_store.h"
#include "model/synthetic.h"

namespace {

namespace ex = pathwise::exporters;
namespace model = pathwise::model;

struct Fixture {
  model::SnapshotStore store;
  std::unique_ptr<ex::HttpServer> server;
  int port = 0;
};

// One server for the whole run: starting one per input would measure
// thread creation, not request handling. Never destroyed (its worker
// threads would outlive a static destructor's order).
Fixture* Get() {
  static Fixture* f = [] {
    auto* fx = new Fixture;
    model::Snapshot s =
        model::MakeSyntheticSnapshot({.subsystems = 2,
                                      .heads_per_subsystem = 2,
                                      .controllers_per_subsystem = 2});
    fx->store.Publish(std::make_shared<model::Snapshot>(std::move(s)));
    auto server = ex::HttpServer::Start(
        "127.0.0.1:0",
        ex::MakeAgentRoutes(
            fx->store,
            [] { return model::Health{.ready = true, .live = true}; },
            {"1.2.3", "fuzz"}),
        // A half-closed partial request is let go at the next sweep: sooner
        // sweeps, more inputs per second.
        ex::HttpServerOptions{.sweep_interval_ms = 5});
    if (!server.ok() || (*server)->ListeningPorts().empty()) __builtin_trap();
    fx->server = std::move(*server);
    fx->port = fx->server->ListeningPorts()[0];
    return fx;
  }();
  return f;
}

// Sends `raw`, half-closes, reads until the server closes. False on a
// timeout: the server neither answered nor closed.
bool Exchange(int port, const uint8_t* data, size_t size, std::string& out) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) __builtin_trap();
  timeval tv{.tv_sec = 15, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    __builtin_trap();
  }
  size_t sent = 0;
  while (sent < size) {
    const ssize_t n = send(fd, data + sent, size - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may close early on a bad request
    sent += static_cast<size_t>(n);
  }
  shutdown(fd, SHUT_WR);
  char buf[65536];
  bool ok = true;
  while (true) {
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n > 0) {
      out.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) ok = false;
    break;
  }
  close(fd);
  return ok;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The input as an Accept-Encoding value too (the server negotiates gzip
  // with it); any answer is fine, a crash is not.
  (void)ex::AcceptsGzip(
      absl::string_view(reinterpret_cast<const char*>(data), size));
  Fixture* f = Get();
  std::string response;
  if (!Exchange(f->port, data, size, response)) __builtin_trap();  // a hang
  // An answer starts with a well-formed status line, "HTTP/1.x NNN reason"
  // in printable ASCII (nothing of the request echoed into it), and is
  // never a failure of the agent's handlers (500) or of its health (503:
  // the fixture is healthy); the server's protocol answers (400, 505, ...)
  // are fine.
  if (!response.empty()) {
    const absl::string_view r(response);
    const absl::string_view line = r.substr(0, r.find("\r\n"));
    int code = 0;
    if (line.size() < 13 ||
        !(absl::StartsWith(line, "HTTP/1.1 ") ||
          absl::StartsWith(line, "HTTP/1.0 ")) ||
        !absl::SimpleAtoi(line.substr(9, 3), &code) || line[12] != ' ' ||
        code < 100 || code >= 600 || code == 500 || code == 503) {
      __builtin_trap();
    }
    for (char c : line) {
      if (c < 0x20 || c > 0x7e) __builtin_trap();
    }
  }
  return 0;
}

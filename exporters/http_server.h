// SPDX-License-Identifier: Apache-2.0
// The HTTP endpoint: /metrics, /healthz, /api/v1/topology and /.
//
// An event-driven server on libmicrohttpd (Debian's 0.9.75, GnuTLS): a few
// event threads move bytes for every connection with epoll, TLS handshakes
// included, so an idle or stalled connection costs a descriptor and a
// little memory, never a thread; a small fixed pool runs the handlers
// (exporters/fair_pool.h); exporters/conn_guard.h decides which
// connections to admit, evict and time out. Why libmicrohttpd and not
// Boost.Beast/Asio, and why not prometheus::Exposer: see
// docs/http-server.md. /metrics in text is byte for byte what
// prometheus-cpp's TextSerializer would send (exporters/text_serializer.cc,
// tested against it), or protobuf when the scraper asks for it, gzipped
// when the client accepts gzip.
#ifndef PATHWISE_EXPORTERS_HTTP_SERVER_H_
#define PATHWISE_EXPORTERS_HTTP_SERVER_H_

#include <concepts>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "exporters/conn_guard.h"
#include "exporters/web_config.h"

namespace pathwise::exporters {

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  // When set, sent instead of `body`: a large answer shared by concurrent
  // requests (/metrics) is then held once, not once per request.
  std::shared_ptr<const std::string> shared_body;
  // Further header lines (name, value), e.g. the live page's
  // Content-Security-Policy.
  std::vector<std::pair<std::string, std::string>> headers;

  const std::string& Body() const { return shared_body ? *shared_body : body; }
};

// What a handler may look at besides the path: the request's Accept header
// (content negotiation, /metrics) and its query string, both as sent ("" when
// absent).
struct HttpRequest {
  std::string accept;
  std::string query;
};

// A route's handler: a callable taking the request, or taking nothing
// (most routes answer the same whatever the request says).
class HttpHandler {
 public:
  HttpHandler() = default;
  template <typename F>
  requires std::invocable<F&, const HttpRequest&> HttpHandler(F f)
      : fn_(std::move(f)) {}  // NOLINT: implicit by design
  template <typename F>
  requires(std::invocable<F&> && !std::invocable<F&, const HttpRequest&>)
      HttpHandler(F f)  // NOLINT: implicit by design
      : fn_([f = std::move(f)](const HttpRequest&) mutable { return f(); }) {}

  HttpResponse operator()(const HttpRequest& request) const {
    return fn_(request);
  }
  // As a request without Accept header or query string.
  HttpResponse operator()() const { return fn_(HttpRequest{}); }

 private:
  std::function<HttpResponse(const HttpRequest&)> fn_;
};

// Exact request path → handler. Handlers run on the server's handler
// threads and must be thread-safe. Only GET and HEAD reach them; any other
// method gets 405 with "Allow: GET, HEAD".
using HttpRoutes = std::map<std::string, HttpHandler>;

// How the server holds up against clients that connect and then send
// nothing, send a request byte by byte, never read the answer, or open
// thousands of connections (exporters/conn_guard.h has the rules).
struct HttpServerOptions {
  // Threads that move bytes (epoll, TLS included) for every connection.
  // More event threads than cores trade latency under attack for a larger
  // share of a CPU-bound node: on 2 cores, with 4 instead of 2, 64
  // CPU-hungry scrapers got 1.35x the scrapes/s, but the TLS scrape p99
  // under the connection flood of http_attack_test rose from 45-57 ms to
  // 80-103 ms (in one run each), over its 100 ms bound.
  int event_threads = 2;
  // Threads that run handlers and compress answers, taking client
  // addresses in turn.
  int handler_threads = 4;
  // --web.max-connections: connections held at once, all clients; at the
  // limit, a new one evicts the waiting connection of the address holding
  // the most.
  int max_connections = 1024;
  // --web.max-connections-per-client: connections one client address (an
  // IPv6 /64) may hold at once; 0 for no limit. At the limit a new one
  // evicts that address's connection silent longest, else the one waiting
  // longest without a request in progress. Half the total: other
  // addresses keep half, and a scraper behind the same address as a flood
  // of silent sockets has until 512 more arrive to send its first bytes
  // (at 32, a flood of 25,000 connections a second over TLS cut off 11 in
  // 1000 scrapes that had not sent their ClientHello within ~1 ms).
  int max_connections_per_client = 512;
  // From accept (or from the first byte of a later request on a kept-alive
  // connection) to the end of the request's headers, TLS handshake
  // included. A scrape's headers arrive in one segment, so 2 s only ever
  // cuts off clients that stall.
  int request_timeout_ms = 2000;
  // From the end of the headers to the answer written: a client that does
  // not take its answer is cut off (Prometheus' default scrape timeout).
  int write_timeout_ms = 10000;
  // A kept-alive connection waiting for its next request; longer than a
  // scrape interval, so Prometheus keeps one connection.
  int idle_timeout_ms = 120000;
  // How often deadlines are checked (and clients that closed their side
  // without a whole request let go): the deadlines above hold to within it.
  int sweep_interval_ms = 200;
  // Connections accepted by the kernel but not yet by the server.
  int listen_backlog = 1024;
  // Request line plus headers; a longer request is answered 431 (or 414
  // for a long request line) and closed.
  int max_request_size = 16384;
  // Answers of at least this size are gzipped when the client accepts it.
  size_t gzip_min_bytes = 1024;
  // --web.config.file: TLS, client certificates and basic authentication;
  // every path, /healthz included, then needs the credentials.
  WebConfig web;
  // Where the server counts connections (the /metrics route reads them);
  // the server makes its own when null.
  std::shared_ptr<HttpServerCounters> counters;
};

class HttpServer {
 public:
  // Starts serving. On a bind failure the status says which address and why
  // (e.g. "cannot listen on 127.0.0.1:9877: address already in use").
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(
      const std::string& listen_address, HttpRoutes routes,
      const HttpServerOptions& options = {});

  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The TCP ports actually bound.
  std::vector<int> ListeningPorts() const;
  // The connection counters (the ones passed in options, or the server's).
  const HttpServerCounters& counters() const;

  struct Impl;

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace pathwise::exporters

#endif  // PATHWISE_EXPORTERS_HTTP_SERVER_H_

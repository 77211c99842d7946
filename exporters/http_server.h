// The HTTP endpoint: /metrics, /healthz, /api/v1/topology and /.
//
// Why civetweb directly and not prometheus::Exposer: prometheus-cpp 1.0.1's
// Exposer serves only Collectables. Its CivetServer is private, it has no way
// to add other handlers, and its one hook (CivetCallbacks::begin_request)
// carries no per-server context, so routing /healthz and /api/v1/topology
// through it would need process-global state. It also reports a busy port
// only as a generic CivetException ("null context when constructing
// CivetServer"). So we run the same embedded server Exposer wraps (Debian's
// prometheus-cpp-pull links the system libcivetweb) with our own routes, and
// /metrics in text is byte for byte what Exposer's TextSerializer would send
// (uncompressed; exporters/text_serializer.cc, tested against it), or
// protobuf when the scraper asks for it. mg_start2() gives the
// exact bind error, so "address already in use" is reported as such.
#ifndef PATHWISE_EXPORTERS_HTTP_SERVER_H_
#define PATHWISE_EXPORTERS_HTTP_SERVER_H_

#include <sys/types.h>

#include <atomic>
#include <concepts>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "exporters/basic_auth.h"
#include "exporters/client_limit.h"
#include "exporters/web_config.h"

struct mg_context;
struct mg_connection;

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

// Exact request path → handler. Handlers run on civetweb's worker threads
// and must be thread-safe. Only GET and HEAD reach them; any other method
// gets 405 with "Allow: GET, HEAD".
using HttpRoutes = std::map<std::string, HttpHandler>;

// Converts --listen_address ("[host]:port", e.g. ":9877", "127.0.0.1:9877")
// into civetweb's listening_ports syntax; InvalidArgument on anything else,
// IPv6 included: the civetweb we link (Debian's 1.15) is built without
// IPv6, so a bracketed address could never be bound.
absl::StatusOr<std::string> ToCivetListeningPorts(
    const std::string& listen_address);

// How the server holds up against clients that connect and then send
// nothing, send a request byte by byte, or never read the answer.
//
// civetweb gives each connection a worker thread from accept to close, and
// a worker waits for a request's headers (or for the client to take the
// answer) for at most request_timeout_ms. One client address may hold at
// most max_connections_per_client workers at a time: a connection beyond
// that is answered 503 and closed as soon as a worker takes it, without
// waiting for its request, so a client with hundreds of stalled sockets
// holds a few workers and the others keep serving everybody else. Only
// several addresses at their limit together (num_threads /
// max_connections_per_client of them) can occupy every worker, and then
// each stalled connection still holds its worker for at most
// request_timeout_ms. Keep-alive is off: a connection carries one request,
// so a client that keeps a connection busy cannot keep a worker from the
// clients queued behind it.
struct HttpServerOptions {
  // civetweb hands connections to its workers in turn, so every worker
  // serves and renders sooner or later, and each keeps what it touched (its
  // stack pages, glibc's per-thread cache of freed blocks): about 25 KiB of
  // RSS per worker that has served /metrics. With the per-client limit, 32
  // workers leave 24 for others while one client holds its 8.
  int num_threads = 32;
  // --web.max_connections_per_client: workers one client address may hold
  // at once; 0 for no limit. A Prometheus server scrapes a target over one
  // connection at a time; 8 leaves room for probes and a few people with
  // curl behind one NAT address.
  int max_connections_per_client = 8;
  // Deadline for the request line and headers (counted from when a worker
  // takes the connection), and for writing one response. A scrape's
  // headers arrive in one segment and /metrics for 256 paths is written in
  // milliseconds on a LAN, so 2 s only ever cuts off clients that stall.
  int request_timeout_ms = 2000;
  // Connections accepted by the kernel but not yet by civetweb; big enough
  // that a burst of idle sockets does not make the kernel drop real SYNs.
  int listen_backlog = 1024;
  // Request line plus headers; civetweb answers a longer request 400.
  int max_request_size = 16384;
  // --web.config.file: TLS and basic authentication; every path, /healthz
  // included, then needs the credentials.
  WebConfig web;
  // Where the server counts refused connections (the /metrics route reads
  // them); the server makes its own when null.
  std::shared_ptr<HttpServerCounters> counters;
};

// civetweb's configuration for serving `listening_ports` (civetweb syntax,
// see ToCivetListeningPorts) with `options`, as name/value pairs in order.
// Every option the server is started with comes from here.
std::vector<std::pair<std::string, std::string>> CivetOptions(
    const std::string& listening_ports, const HttpServerOptions& options);

class HttpServer {
 public:
  // Starts serving. On a bind failure the status says which address and why
  // (e.g. "listen address 127.0.0.1:9877: address already in use").
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(
      const std::string& listen_address, HttpRoutes routes,
      const HttpServerOptions& options = {});

  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The TCP ports actually bound.
  std::vector<int> ListeningPorts() const;

 private:
  HttpServer(HttpRoutes routes, int max_connections_per_client, bool tls,
             std::shared_ptr<HttpServerCounters> counters)
      : routes_(std::move(routes)),
        max_per_client_(max_connections_per_client),
        tls_(tls),
        counters_(std::move(counters)) {}
  static int Dispatch(mg_connection* conn, void* self);
  // civetweb's init_connection and connection_close callbacks: the
  // per-client limit.
  static int InitConnection(const mg_connection* conn, void** conn_data);
  static void ConnectionClose(const mg_connection* conn);
  static HttpServer* Of(const mg_connection* conn);
  // Refuses every connection beyond max_per_client_ of its client address.
  void EnforceClientLimit();

  HttpRoutes routes_;
  std::string host_;  // the listen address's host, "" for all interfaces
  // Null unless basic_auth_users is set.
  std::unique_ptr<BasicAuthenticator> auth_;
  const int max_per_client_;
  const bool tls_;
  std::shared_ptr<HttpServerCounters> counters_;
  // Connections that have a worker (init_connection ran, not yet closed).
  std::atomic<int> active_{0};
  absl::Mutex limit_mu_;
  // Inodes of the connections refused and not yet closed.
  std::set<ino_t> refused_ ABSL_GUARDED_BY(limit_mu_);
  mg_context* ctx_ = nullptr;
};

}  // namespace pathwise::exporters

#endif  // PATHWISE_EXPORTERS_HTTP_SERVER_H_

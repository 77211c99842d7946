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

#include <concepts>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "exporters/basic_auth.h"
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
// answer) for at most request_timeout_ms. So fewer than num_threads such
// clients cannot delay anybody, and a burst of N of them delays the next
// request by at most about ceil(N / num_threads) * request_timeout_ms.
// Keep-alive is off: a connection carries one request, so a client that
// keeps a connection busy cannot keep a worker from the clients queued
// behind it.
struct HttpServerOptions {
  // Idle workers cost a stack each (touched pages only) and a request
  // buffer; 128 of them keep the agent well under its memory budget.
  int num_threads = 128;
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
  explicit HttpServer(HttpRoutes routes) : routes_(std::move(routes)) {}
  static int Dispatch(mg_connection* conn, void* self);

  HttpRoutes routes_;
  std::string host_;  // the listen address's host, "" for all interfaces
  // Null unless basic_auth_users is set.
  std::unique_ptr<BasicAuthenticator> auth_;
  mg_context* ctx_ = nullptr;
};

}  // namespace pathwise::exporters

#endif  // PATHWISE_EXPORTERS_HTTP_SERVER_H_

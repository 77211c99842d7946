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
// /metrics is prometheus-cpp's own Collectable + TextSerializer output, byte
// for byte what Exposer would send (uncompressed). mg_start2() gives the
// exact bind error, so "address already in use" is reported as such.
#ifndef PATHWISE_EXPORTERS_HTTP_SERVER_H_
#define PATHWISE_EXPORTERS_HTTP_SERVER_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
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
};

// Exact request path → handler. Handlers run on civetweb's worker threads
// and must be thread-safe.
using HttpRoutes = std::map<std::string, std::function<HttpResponse()>>;

// Converts --listen_address ("[host]:port", e.g. ":9877", "127.0.0.1:9877",
// "[::1]:9877") into civetweb's listening_ports syntax; InvalidArgument on
// anything else.
absl::StatusOr<std::string> ToCivetListeningPorts(
    const std::string& listen_address);

class HttpServer {
 public:
  // Starts serving. On a bind failure the status says which address and why
  // (e.g. "listen address 127.0.0.1:9877: address already in use").
  // `web` (--web.config.file) turns on TLS and basic authentication; every
  // path, /healthz included, then needs the credentials.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(
      const std::string& listen_address, HttpRoutes routes, int num_threads = 4,
      const WebConfig& web = {});

  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The TCP ports actually bound.
  std::vector<int> ListeningPorts() const;

 private:
  explicit HttpServer(HttpRoutes routes) : routes_(std::move(routes)) {}
  static int Dispatch(mg_connection* conn, void* self);

  HttpRoutes routes_;
  // Null unless basic_auth_users is set.
  std::unique_ptr<BasicAuthenticator> auth_;
  mg_context* ctx_ = nullptr;
};

}  // namespace pathwise::exporters

#endif  // PATHWISE_EXPORTERS_HTTP_SERVER_H_

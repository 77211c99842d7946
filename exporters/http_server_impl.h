// SPDX-License-Identifier: Apache-2.0
// The HTTP server's insides, shared by its two halves: connections
// (http_connections.cc: admission, eviction, deadlines, client
// certificates) and requests (http_server.cc: handlers on the pool, gzip,
// the answer). Not for use outside exporters/http_*.cc.
#ifndef PATHWISE_EXPORTERS_HTTP_SERVER_IMPL_H_
#define PATHWISE_EXPORTERS_HTTP_SERVER_IMPL_H_

#include <microhttpd.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "exporters/basic_auth.h"
#include "exporters/conn_guard.h"
#include "exporters/fair_pool.h"
#include "exporters/http_server.h"

namespace pathwise::exporters {
namespace http_internal {

// What the server knows of one connection (libmicrohttpd's socket
// context), from accept to close.
struct Conn {
  ConnGuard::Id id = 0;
  int fd = -1;
  std::string client = "?";  // ClientKey
};

// One request's progress (libmicrohttpd's request context): the handler
// runs on the pool while the connection is suspended, then the answer is
// queued when libmicrohttpd calls back on the connection's own thread.
struct Request {
  enum class State { kNew, kRunning, kReady };
  State state = State::kNew;
  Conn* conn = nullptr;
  HttpResponse response;
  bool gzip = false;  // the client accepts gzip
  // The answer's body gzipped (by the handler thread), when sent so.
  std::shared_ptr<const std::string> gz;
};

// What a connection has received so far (TCP_INFO), nullopt if unknown.
std::optional<uint64_t> BytesReceived(int fd);

}  // namespace http_internal

struct HttpServer::Impl {
  HttpRoutes routes;
  HttpServerOptions options;
  std::shared_ptr<HttpServerCounters> counters;
  std::unique_ptr<BasicAuthenticator> auth;
  bool tls = false;
  ClientAuth client_auth = ClientAuth::kNoClientCert;
  std::string cert, key, ca, priorities;
  int listen_fd = -1;
  int port = 0;
  MHD_Daemon* daemon = nullptr;
  std::atomic<uint64_t> next_id{1};

  absl::Mutex mu;
  ConnGuard guard ABSL_GUARDED_BY(mu);

  // The last shared answer compressed, so concurrent and repeated scrapes
  // of one rendering compress it once.
  absl::Mutex gzip_mu;
  std::weak_ptr<const std::string> gzip_source ABSL_GUARDED_BY(gzip_mu);
  std::shared_ptr<const std::string> gzip_body ABSL_GUARDED_BY(gzip_mu);

  std::unique_ptr<FairPool> pool;
  absl::Notification stop_reaper;
  std::thread reaper;
  std::atomic<bool> running{false};
  // Set first when stopping: new connections are refused from then on.
  std::atomic<bool> stopping{false};
  std::string last_error;  // libmicrohttpd's last message during start

  explicit Impl(const HttpServerOptions& o)
      : options(o),
        guard(ConnLimits{
            .max_total = o.max_connections,
            .max_per_client = o.max_connections_per_client,
            .request_timeout = absl::Milliseconds(o.request_timeout_ms),
            .write_timeout = absl::Milliseconds(o.write_timeout_ms),
            .idle_timeout = absl::Milliseconds(o.idle_timeout_ms)}) {}

  void Started(MHD_Connection* c, void** socket_context);  // connections
  void Closed(void* socket_context);
  MHD_Result OnRequest(MHD_Connection* c, const char* url, const char* method,
                       size_t* upload_size, void** req_cls);
  void Completed(void** req_cls);
  void Run(http_internal::Request* r, std::string path, std::string query,
           std::string accept, const char* authorization);
  MHD_Result Queue(MHD_Connection* c, http_internal::Request* r);
  std::shared_ptr<const std::string> Compressed(const HttpResponse& r);
  void Reap();
  // Shuts `fd` down both ways: libmicrohttpd then sees the end of the
  // stream, or an error, on its next read or write, and closes it.
  static void Shut(int fd) { shutdown(fd, SHUT_RDWR); }
};

}  // namespace pathwise::exporters

#endif  // PATHWISE_EXPORTERS_HTTP_SERVER_IMPL_H_

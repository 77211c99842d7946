#include "exporters/http_server.h"

#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <linux/tcp.h>  // tcp_info with tcpi_bytes_received (glibc's is older)
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "exporters/basic_auth.h"
#include "exporters/fair_pool.h"
#include "exporters/http_gzip.h"
#include "exporters/listen_socket.h"
#include "spdlog/spdlog.h"

namespace pathwise::exporters {
namespace {

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
  bool head = false;
  bool gzip = false;  // the client accepts gzip
  // The answer's body gzipped (by the handler thread), when sent so.
  std::shared_ptr<const std::string> gz;
};

std::optional<uint64_t> BytesReceived(int fd) {
  tcp_info info{};
  socklen_t len = sizeof(info);
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0 ||
      len < offsetof(tcp_info, tcpi_bytes_received) +
                sizeof(info.tcpi_bytes_received)) {
    return std::nullopt;
  }
  return info.tcpi_bytes_received;
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// GnuTLS priorities offering TLS min..max (10..13 for 1.0..1.3).
std::string TlsPriorities(const TlsServerConfig& tls) {
  std::string p = "NORMAL:-VERS-ALL";
  for (int v = tls.min_version; v <= tls.max_version; ++v) {
    absl::StrAppend(&p, ":+VERS-TLS1.", v - 10);
  }
  return p;
}

// Decodes %XX in a path; nullopt on a bad escape or an encoded NUL, which
// would otherwise cut the path short ("/metrics%00" is not /metrics).
std::optional<std::string> DecodePath(const std::string& raw) {
  std::string out;
  out.reserve(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] != '%') {
      out += raw[i];
      continue;
    }
    if (i + 2 >= raw.size() || !absl::ascii_isxdigit(raw[i + 1]) ||
        !absl::ascii_isxdigit(raw[i + 2])) {
      return std::nullopt;
    }
    const int v = std::stoi(raw.substr(i + 1, 2), nullptr, 16);
    if (v == 0) return std::nullopt;
    out += static_cast<char>(v);
    i += 2;
  }
  return out;
}

// VerifyClientCertIfGiven, during the handshake: a client without a
// certificate passes; one with a certificate that does not verify against
// client_ca_file (or has expired) fails the handshake.
int VerifyIfGiven(gnutls_session_t session) {
  unsigned n = 0;
  if (gnutls_certificate_get_peers(session, &n) == nullptr || n == 0) return 0;
  unsigned status = 0;
  if (gnutls_certificate_verify_peers2(session, &status) < 0 || status != 0) {
    return GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR;
  }
  return 0;
}

// A fixed status line and a short body: nothing of the request in it.
constexpr char kRefusal[] =
    "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n"
    "Content-Length: 26\r\nConnection: close\r\n\r\n"
    "too many connections open\n";

}  // namespace

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
  std::string last_error;  // libmicrohttpd's last message during start

  explicit Impl(const HttpServerOptions& o)
      : options(o),
        guard(ConnLimits{
            .max_total = o.max_connections,
            .max_per_client = o.max_connections_per_client,
            .request_timeout = absl::Milliseconds(o.request_timeout_ms),
            .write_timeout = absl::Milliseconds(o.write_timeout_ms),
            .idle_timeout = absl::Milliseconds(o.idle_timeout_ms)}) {}

  void Started(MHD_Connection* c, void** socket_context);
  void Closed(void* socket_context);
  MHD_Result OnRequest(MHD_Connection* c, const char* url, const char* method,
                       size_t* upload_size, void** req_cls);
  void Completed(void** req_cls);
  void Run(Request* r, MHD_Connection* c, std::string path, std::string query,
           std::string accept, const char* authorization);
  MHD_Result Queue(MHD_Connection* c, Request* r);
  std::shared_ptr<const std::string> Compressed(const HttpResponse& r);
  void Reap();
  // Shuts `fd` down both ways: libmicrohttpd then sees the end of the
  // stream, or an error, on its next read or write, and closes it.
  static void Shut(int fd) { shutdown(fd, SHUT_RDWR); }
};

void HttpServer::Impl::Started(MHD_Connection* c, void** socket_context) {
  auto* conn = new Conn;
  *socket_context = conn;
  conn->id = next_id++;
  const MHD_ConnectionInfo* fd =
      MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
  conn->fd = fd != nullptr ? fd->connect_fd : -1;
  const MHD_ConnectionInfo* addr =
      MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  if (addr != nullptr && addr->client_addr != nullptr) {
    const size_t len = addr->client_addr->sa_family == AF_INET6
                           ? sizeof(sockaddr_in6)
                           : sizeof(sockaddr_in);
    conn->client = ClientKey(addr->client_addr, len);
  }
  counters->accepted++;
  counters->open++;
  if (tls && client_auth != ClientAuth::kNoClientCert) {
    // libmicrohttpd asks for a certificate only when given a CA, and never
    // requires or verifies one: set what client_auth_type says on the
    // session before its handshake, so GnuTLS fails the handshake itself
    // (as Go's crypto/tls does) instead of a request learning it later.
    const MHD_ConnectionInfo* s =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    if (s != nullptr && s->tls_session != nullptr) {
      auto* session = static_cast<gnutls_session_t>(s->tls_session);
      const bool required =
          client_auth == ClientAuth::kRequireAnyClientCert ||
          client_auth == ClientAuth::kRequireAndVerifyClientCert;
      gnutls_certificate_server_set_request(
          session, required ? GNUTLS_CERT_REQUIRE : GNUTLS_CERT_REQUEST);
      if (client_auth == ClientAuth::kRequireAndVerifyClientCert) {
        gnutls_session_set_verify_cert(session, nullptr, 0);
      } else if (client_auth == ClientAuth::kVerifyClientCertIfGiven) {
        // GnuTLS's own check would also refuse a client that sends none.
        gnutls_session_set_verify_function(session, &VerifyIfGiven);
      }
    }
  }
  absl::MutexLock lock(&mu);
  ConnGuard::Admission a = guard.Admit(conn->id, conn->client, conn->fd,
                                       absl::Now(), &BytesReceived);
  for (const auto& [victim, reason] : a.evict) {
    counters->CountRefused(reason);
    Shut(guard.Handle(victim));
  }
  if (!a.admitted) {
    counters->CountRefused(a.reason);
    // Nothing has been read or written yet: on plain HTTP the client gets
    // a fixed 503 if its socket takes it at once; on TLS only the close.
    if (!tls) {
      [[maybe_unused]] ssize_t n = send(conn->fd, kRefusal, sizeof(kRefusal) - 1,
                                        MSG_DONTWAIT | MSG_NOSIGNAL);
    }
    Shut(conn->fd);
  }
}

void HttpServer::Impl::Closed(void* socket_context) {
  auto* conn = static_cast<Conn*>(socket_context);
  if (conn == nullptr) return;
  counters->open--;
  {
    // Before libmicrohttpd closes the descriptor: past this point the
    // reaper and evictions no longer touch it.
    absl::MutexLock lock(&mu);
    guard.Closed(conn->id);
  }
  delete conn;
}

void HttpServer::Impl::Reap() {
  while (!stop_reaper.WaitForNotificationWithTimeout(absl::Milliseconds(200))) {
    absl::MutexLock lock(&mu);
    for (const auto& [id, reason] :
         guard.Sweep(absl::Now(), &BytesReceived)) {
      if (reason) counters->CountRefused(*reason);
      Shut(guard.Handle(id));
    }
  }
}

MHD_Result HttpServer::Impl::OnRequest(MHD_Connection* c, const char* url,
                                       const char* method, size_t* upload_size,
                                       void** req_cls) {
  auto* r = static_cast<Request*>(*req_cls);
  if (r == nullptr) {
    r = new Request;
    *req_cls = r;
    const MHD_ConnectionInfo* ctx =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    r->conn = ctx != nullptr ? static_cast<Conn*>(ctx->socket_context)
                             : nullptr;
    if (r->conn != nullptr) {
      absl::MutexLock lock(&mu);
      guard.RequestStarted(r->conn->id, absl::Now());
    }
    const std::string m = method != nullptr ? method : "";
    r->head = m == "HEAD";
    if (m != "GET" && !r->head) {
      // Answered at once: a body, if any, is not read.
      r->response = {405, "text/plain; charset=utf-8", "method not allowed\n"};
      r->state = Request::State::kReady;
      return Queue(c, r);
    }
    // Answered on a later call, once the whole request is in: an answer
    // queued on this first call makes libmicrohttpd close the connection
    // after it (it would not read the rest of the request), which would
    // end keep-alive.
    return MHD_YES;
  }
  if (*upload_size != 0) {  // a GET with a body: ignored
    *upload_size = 0;
    return MHD_YES;
  }
  if (r->state == Request::State::kReady) return Queue(c, r);
  if (r->state == Request::State::kRunning) return MHD_YES;

  // The raw (still percent-encoded) path and query, and the headers a
  // handler needs, copied: the handler runs on another thread.
  std::string path = url != nullptr ? url : "";
  std::string query;
  MHD_get_connection_values(
      c, MHD_GET_ARGUMENT_KIND,
      +[](void* cls, MHD_ValueKind, const char* k, const char* v) {
        auto* q = static_cast<std::string*>(cls);
        absl::StrAppend(q, q->empty() ? "" : "&", k, v != nullptr ? "=" : "",
                        v != nullptr ? v : "");
        return MHD_YES;
      },
      &query);
  auto header = [c](const char* name) -> std::string {
    const char* v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
    return v != nullptr ? v : "";
  };
  r->gzip = AcceptsGzip(header("Accept-Encoding"));
  std::string accept = header("Accept");
  std::string authorization = header("Authorization");
  const bool has_auth = !authorization.empty() ||
                        MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                    "Authorization") != nullptr;
  r->state = Request::State::kRunning;
  MHD_suspend_connection(c);
  const std::string client = r->conn != nullptr ? r->conn->client : "?";
  const bool queued = pool->Submit(
      client, [this, r, c, path = std::move(path), query = std::move(query),
               accept = std::move(accept),
               authorization = std::move(authorization), has_auth]() mutable {
        Run(r, c, std::move(path), std::move(query), std::move(accept),
            has_auth ? authorization.c_str() : nullptr);
        MHD_resume_connection(c);
      });
  if (!queued) {  // stopping
    r->response = {503, "text/plain; charset=utf-8", "shutting down\n"};
    r->state = Request::State::kReady;
    MHD_resume_connection(c);
  }
  return MHD_YES;
}

void HttpServer::Impl::Run(Request* r, MHD_Connection* /*c*/, std::string path,
                           std::string query, std::string accept,
                           const char* authorization) {
  HttpResponse resp;
  if (auth != nullptr && !auth->Check(authorization)) {
    resp = {401, "text/plain; charset=utf-8", "unauthorized\n"};
    resp.headers.push_back(
        {"WWW-Authenticate", "Basic realm=\"pathwise\", charset=\"UTF-8\""});
  } else if (std::optional<std::string> decoded = DecodePath(path); !decoded) {
    resp = {400, "text/plain; charset=utf-8", "bad request\n"};
  } else if (auto it = routes.find(*decoded); it == routes.end()) {
    resp = {404, "text/plain; charset=utf-8", "not found\n"};
  } else {
    try {
      resp = it->second(HttpRequest{std::move(accept), std::move(query)});
    } catch (const std::exception& e) {
      resp = {500, "text/plain; charset=utf-8",
              absl::StrCat("internal error: ", e.what(), "\n")};
    }
  }
  const std::string& body = resp.Body();
  if (r->gzip && resp.status == 200 && body.size() >= options.gzip_min_bytes) {
    r->gz = Compressed(resp);
    if (r->gz->empty()) r->gz = nullptr;  // zlib failed: sent as is
  }
  r->response = std::move(resp);
  r->state = Request::State::kReady;
}

std::shared_ptr<const std::string> HttpServer::Impl::Compressed(
    const HttpResponse& r) {
  if (r.shared_body == nullptr) {
    return std::make_shared<const std::string>(Gzip(r.body));
  }
  {
    absl::MutexLock lock(&gzip_mu);
    if (gzip_source.lock() == r.shared_body) return gzip_body;
  }
  auto gz = std::make_shared<const std::string>(Gzip(*r.shared_body));
  absl::MutexLock lock(&gzip_mu);
  gzip_source = r.shared_body;
  gzip_body = gz;
  return gz;
}

MHD_Result HttpServer::Impl::Queue(MHD_Connection* c, Request* r) {
  HttpResponse& resp = r->response;
  std::shared_ptr<const std::string> body =
      resp.shared_body != nullptr
          ? resp.shared_body
          : std::make_shared<const std::string>(std::move(resp.body));
  const bool gzipped = r->gz != nullptr;
  const bool compressible = body->size() >= options.gzip_min_bytes;
  if (gzipped) {
    body = r->gz;
    counters->gzip_responses++;
  }
  auto* holder = new std::shared_ptr<const std::string>(body);
  MHD_Response* m = MHD_create_response_from_buffer_with_free_callback_cls(
      body->size(), const_cast<char*>(body->data()),
      +[](void* cls) {
        delete static_cast<std::shared_ptr<const std::string>*>(cls);
      },
      holder);
  if (m == nullptr) {
    delete holder;
    return MHD_NO;
  }
  MHD_add_response_header(m, "Content-Type", resp.content_type.c_str());
  MHD_add_response_header(m, "Cache-Control", "no-store");
  if (resp.status == 405) MHD_add_response_header(m, "Allow", "GET, HEAD");
  if (gzipped) MHD_add_response_header(m, "Content-Encoding", "gzip");
  if (compressible || gzipped) {
    MHD_add_response_header(m, "Vary", "Accept-Encoding");
  }
  for (const auto& [name, value] : resp.headers) {
    if (options.web.headers.count(name) != 0) continue;  // configured wins
    MHD_add_response_header(m, name.c_str(), value.c_str());
  }
  for (const auto& [name, value] : options.web.headers) {
    MHD_add_response_header(m, name.c_str(), value.c_str());
  }
  const MHD_Result ok =
      MHD_queue_response(c, static_cast<unsigned>(resp.status), m);
  MHD_destroy_response(m);
  return ok;
}

void HttpServer::Impl::Completed(void** req_cls) {
  auto* r = static_cast<Request*>(*req_cls);
  if (r == nullptr) return;
  *req_cls = nullptr;
  if (r->conn != nullptr) {
    const std::optional<uint64_t> in = BytesReceived(r->conn->fd);
    absl::MutexLock lock(&mu);
    guard.RequestDone(r->conn->id, absl::Now(), in.value_or(0));
  }
  delete r;
}

namespace {

void LogFromMhd(void* cls, const char* fmt, va_list ap) {
  char buf[512];
  std::vsnprintf(buf, sizeof(buf), fmt, ap);
  std::string line(buf);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) {
    line.pop_back();
  }
  auto* impl = static_cast<HttpServer::Impl*>(cls);
  if (!impl->running.load()) impl->last_error = line;  // still starting
  spdlog::debug("http: {}", line);
}

// libmicrohttpd decodes the path before handing it over, and an encoded
// NUL would cut it short; it is decoded by DecodePath instead.
size_t KeepEscaped(void*, MHD_Connection*, char* s) { return std::strlen(s); }

}  // namespace

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    const std::string& listen_address, HttpRoutes routes,
    const HttpServerOptions& options) {
  auto impl = std::make_unique<Impl>(options);
  impl->routes = std::move(routes);
  impl->counters = options.counters != nullptr
                       ? options.counters
                       : std::make_shared<HttpServerCounters>();
  const WebConfig& web = options.web;
  if (!web.basic_auth_users.empty()) {
    impl->auth = std::make_unique<BasicAuthenticator>(web.basic_auth_users);
  }
  if (web.tls) {
    impl->tls = true;
    impl->client_auth = web.tls->client_auth;
    for (auto [file, out] : {std::pair{&web.tls->cert_file, &impl->cert},
                             std::pair{&web.tls->key_file, &impl->key},
                             std::pair{&web.tls->client_ca_file, &impl->ca}}) {
      if (file->empty()) continue;
      absl::StatusOr<std::string> text = ReadFile(*file);
      if (!text.ok()) return text.status();
      *out = *std::move(text);
    }
    impl->priorities = TlsPriorities(*web.tls);
  }
  absl::StatusOr<int> fd =
      OpenListenSocket(listen_address, options.listen_backlog);
  if (!fd.ok()) return fd.status();
  impl->listen_fd = *fd;
  impl->port = LocalPort(*fd);
  impl->pool = std::make_unique<FairPool>(options.handler_threads);

  unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME |
                   MHD_USE_ERROR_LOG;
  if (impl->tls) flags |= MHD_USE_TLS;
  Impl* self = impl.get();
  std::vector<MHD_OptionItem> opts = {
      {MHD_OPTION_LISTEN_SOCKET, *fd, nullptr},
      {MHD_OPTION_THREAD_POOL_SIZE,
       static_cast<intptr_t>(std::max(1, options.event_threads)), nullptr},
      // libmicrohttpd's own cap, above ours: connections told to close
      // still count until they are gone.
      {MHD_OPTION_CONNECTION_LIMIT,
       static_cast<intptr_t>(2 * options.max_connections + 64), nullptr},
      // Its idle timeout backs up the reaper's.
      {MHD_OPTION_CONNECTION_TIMEOUT,
       static_cast<intptr_t>(options.idle_timeout_ms / 1000 + 1), nullptr},
      // Request line and headers live in this per-connection pool (a
      // request beyond it is answered 431), reused for the answer's headers.
      {MHD_OPTION_CONNECTION_MEMORY_LIMIT,
       static_cast<intptr_t>(options.max_request_size), nullptr},
      {MHD_OPTION_EXTERNAL_LOGGER, reinterpret_cast<intptr_t>(&LogFromMhd),
       self},
      {MHD_OPTION_UNESCAPE_CALLBACK, reinterpret_cast<intptr_t>(&KeepEscaped),
       nullptr},
      {MHD_OPTION_NOTIFY_CONNECTION,
       reinterpret_cast<intptr_t>(
           +[](void* cls, MHD_Connection* c, void** socket_context,
               MHD_ConnectionNotificationCode code) {
             auto* impl = static_cast<Impl*>(cls);
             if (code == MHD_CONNECTION_NOTIFY_STARTED) {
               impl->Started(c, socket_context);
             } else {
               impl->Closed(*socket_context);
               *socket_context = nullptr;
             }
           }),
       self},
      {MHD_OPTION_NOTIFY_COMPLETED,
       reinterpret_cast<intptr_t>(
           +[](void* cls, MHD_Connection*, void** req_cls,
               MHD_RequestTerminationCode) {
             static_cast<Impl*>(cls)->Completed(req_cls);
           }),
       self},
  };
  if (impl->tls) {
    opts.push_back({MHD_OPTION_HTTPS_MEM_CERT, 0, impl->cert.data()});
    opts.push_back({MHD_OPTION_HTTPS_MEM_KEY, 0, impl->key.data()});
    opts.push_back(
        {MHD_OPTION_HTTPS_PRIORITIES, 0, impl->priorities.data()});
    if (!impl->ca.empty()) {
      opts.push_back({MHD_OPTION_HTTPS_MEM_TRUST, 0, impl->ca.data()});
    }
  }
  opts.push_back({MHD_OPTION_END, 0, nullptr});
  impl->daemon = MHD_start_daemon(
      flags, 0, nullptr, nullptr,
      +[](void* cls, MHD_Connection* c, const char* url, const char* method,
          const char*, const char*, size_t* upload_size, void** req_cls) {
        return static_cast<Impl*>(cls)->OnRequest(c, url, method, upload_size,
                                                  req_cls);
      },
      self, MHD_OPTION_ARRAY, opts.data(), MHD_OPTION_END);
  if (impl->daemon == nullptr) {
    close(impl->listen_fd);
    impl->pool->Stop();
    return absl::UnavailableError(absl::StrCat(
        "cannot serve on ", listen_address, ": ",
        impl->last_error.empty() ? "libmicrohttpd failed to start"
                                 : impl->last_error));
  }
  impl->running = true;
  impl->reaper = std::thread([self] { self->Reap(); });
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

HttpServer::~HttpServer() {
  Impl& s = *impl_;
  // No new connections; the listening socket is ours to close.
  const MHD_socket listen = MHD_quiesce_daemon(s.daemon);
  s.stop_reaper.Notify();
  s.reaper.join();
  // Every handler finishes and resumes its connection: libmicrohttpd
  // must not be stopped with a connection suspended.
  s.pool->Stop();
  MHD_stop_daemon(s.daemon);
  if (listen != MHD_INVALID_SOCKET) close(listen);
}

std::vector<int> HttpServer::ListeningPorts() const { return {impl_->port}; }

const HttpServerCounters& HttpServer::counters() const {
  return *impl_->counters;
}

}  // namespace pathwise::exporters

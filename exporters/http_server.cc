// SPDX-License-Identifier: Apache-2.0
#include "exporters/http_server.h"

#include <microhttpd.h>
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
#include "exporters/http_gzip.h"
#include "exporters/http_server_impl.h"
#include "exporters/listen_socket.h"
#include "spdlog/spdlog.h"

namespace pathwise::exporters {
namespace {

using http_internal::BytesReceived;
using http_internal::Conn;
using http_internal::Request;

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return absl::InvalidArgumentError(absl::StrCat("cannot read ", path));
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

}  // namespace

MHD_Result HttpServer::Impl::OnRequest(MHD_Connection* c, const char* url,
                                       const char* method, size_t* upload_size,
                                       void** req_cls) {
  auto* r = static_cast<Request*>(*req_cls);
  if (r == nullptr) {
    r = new Request;
    *req_cls = r;
    const MHD_ConnectionInfo* ctx =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    r->conn =
        ctx != nullptr ? static_cast<Conn*>(ctx->socket_context) : nullptr;
    if (r->conn != nullptr) {
      absl::MutexLock lock(&mu);
      guard.RequestStarted(r->conn->id, absl::Now());
    }
    const std::string m = method != nullptr ? method : "";
    if (m != "GET" && m != "HEAD") {
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
  // An absent Authorization header (null to the authenticator) is not an
  // empty one.
  const char* raw_auth =
      MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
  const bool has_auth = raw_auth != nullptr;
  std::string authorization = has_auth ? raw_auth : "";
  r->state = Request::State::kRunning;
  MHD_suspend_connection(c);
  const std::string client = r->conn != nullptr ? r->conn->client : "?";
  const bool queued = pool->Submit(
      client, [this, r, c, path = std::move(path), query = std::move(query),
               accept = std::move(accept),
               authorization = std::move(authorization), has_auth]() mutable {
        Run(r, std::move(path), std::move(query), std::move(accept),
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

void HttpServer::Impl::Run(Request* r, std::string path, std::string query,
                           std::string accept, const char* authorization) {
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
    // This runs on a handler thread, where an exception would end the
    // process: an answer that cannot be compressed goes out as it is.
    try {
      r->gz = Compressed(resp);
    } catch (const std::exception&) {
      r->gz = nullptr;
    }
    if (r->gz != nullptr && r->gz->empty()) r->gz = nullptr;  // zlib failed
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
      // libmicrohttpd's own cap, split evenly over the event threads, must
      // never bind before ours (it refuses silently, and connections told
      // to close still count until they are gone): each thread may hold
      // all of ours.
      {MHD_OPTION_CONNECTION_LIMIT,
       static_cast<intptr_t>(std::max(1, options.event_threads) *
                             (options.max_connections + 64)),
       nullptr},
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
       reinterpret_cast<intptr_t>(+[](void* cls, MHD_Connection* c,
                                      void** socket_context,
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
       reinterpret_cast<intptr_t>(+[](void* cls, MHD_Connection*,
                                      void** req_cls,
                                      MHD_RequestTerminationCode) {
         static_cast<Impl*>(cls)->Completed(req_cls);
       }),
       self},
  };
  if (impl->tls) {
    opts.push_back({MHD_OPTION_HTTPS_MEM_CERT, 0, impl->cert.data()});
    opts.push_back({MHD_OPTION_HTTPS_MEM_KEY, 0, impl->key.data()});
    opts.push_back({MHD_OPTION_HTTPS_PRIORITIES, 0, impl->priorities.data()});
    if (!impl->ca.empty()) {
      opts.push_back({MHD_OPTION_HTTPS_MEM_TRUST, 0, impl->ca.data()});
    }
  }
  opts.push_back({MHD_OPTION_END, 0, nullptr});
  impl->daemon = MHD_start_daemon(
      flags, 0,
      +[](void* cls, const sockaddr*, socklen_t) {
        return static_cast<Impl*>(cls)->stopping.load() ? MHD_NO : MHD_YES;
      },
      self,
      +[](void* cls, MHD_Connection* c, const char* url, const char* method,
          const char*, const char*, size_t* upload_size, void** req_cls) {
        return static_cast<Impl*>(cls)->OnRequest(c, url, method, upload_size,
                                                  req_cls);
      },
      self, MHD_OPTION_ARRAY, opts.data(), MHD_OPTION_END);
  if (impl->daemon == nullptr) {
    close(impl->listen_fd);
    impl->pool->Stop();
    return absl::UnavailableError(
        absl::StrCat("cannot serve on ", listen_address, ": ",
                     impl->last_error.empty() ? "libmicrohttpd failed to start"
                                              : impl->last_error));
  }
  impl->running = true;
  impl->reaper = std::thread([self] { self->Reap(); });
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

HttpServer::~HttpServer() {
  Impl& s = *impl_;
  // No new connections. Not by quiescing the daemon: with epoll event
  // threads, libmicrohttpd's quiesce and its event loop both take the
  // listening socket out of the epoll set without a lock, and the loser of
  // that race aborts the process. The accept policy refuses instead, and
  // stopping the daemon closes the socket.
  s.stopping.store(true);
  s.stop_reaper.Notify();
  s.reaper.join();
  // Every handler finishes and resumes its connection: libmicrohttpd
  // must not be stopped with a connection suspended.
  s.pool->Stop();
  MHD_stop_daemon(s.daemon);
}

std::vector<int> HttpServer::ListeningPorts() const { return {impl_->port}; }

const HttpServerCounters& HttpServer::counters() const {
  return *impl_->counters;
}

}  // namespace pathwise::exporters

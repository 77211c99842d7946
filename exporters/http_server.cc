#include "exporters/http_server.h"

#include <arpa/inet.h>
#include <civetweb.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "exporters/civetweb_tls.h"
#include "spdlog/spdlog.h"

namespace pathwise::exporters {
namespace {

// A connection's user data (mg_get_user_connection_data): counted in
// HttpServer::active_ (init_connection ran for it; civetweb closes some
// connections, a failed TLS handshake, without it). Only the address
// matters.
char kCounted;

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return status < 400 ? "OK" : "Error";
  }
}

// Every answer closes the connection (keep-alive is off, see
// HttpServerOptions), and says so.
void Send(mg_connection* conn, const HttpResponse& r, bool head_only) {
  std::string extra = r.status == 405 ? "Allow: GET, HEAD\r\n" : "";
  for (const auto& [name, value] : r.headers) {
    absl::StrAppend(&extra, name, ": ", value, "\r\n");
  }
  mg_printf(conn,
            "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
            "Cache-Control: no-store\r\n%sConnection: close\r\n\r\n",
            r.status, Reason(r.status), r.content_type.c_str(), r.Body().size(),
            extra.c_str());
  if (!head_only && !r.Body().empty()) {
    mg_write(conn, r.Body().data(), r.Body().size());
  }
}

// civetweb's own error answers (a request it cannot parse, an HTTP version
// it does not speak) start with "HTTP/<the request's version token> ...",
// copied from the request as sent: bytes, CR and LF included, so a client
// could write headers of its choosing into the answer. Every error civetweb
// raises itself is answered here instead, with a fixed status line and
// nothing of the request in it. Returns 0: handled.
int SendCivetError(mg_connection* conn, int status, const char* /*message*/) {
  const char* reason = mg_get_response_code_text(conn, status);
  const std::string body = absl::StrCat("Error ", status, ": ", reason, "\n");
  mg_printf(conn,
            "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
            "Content-Length: %zu\r\nConnection: close\r\n\r\n",
            status, reason, body.size());
  mg_write(conn, body.data(), body.size());
  return 0;
}

int LogMessage(const mg_connection*, const char* message) {
  spdlog::debug("civetweb: {}", message);
  return 1;  // handled: civetweb prints nothing itself
}

// civetweb only says "Failed to setup server ports" when it cannot bind, so
// after a failed start we bind the address once ourselves to learn why.
// Returns 0 if the bind succeeds (the failure was something else).
int ProbeBindErrno(const std::string& listen_address) {
  const size_t colon = listen_address.rfind(':');
  std::string host = listen_address.substr(0, colon);
  const std::string port = listen_address.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  addrinfo hints;
  std::memset(&hints, 0, sizeof(hints));
  hints.ai_family = host.empty() ? AF_INET : AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints,
                  &res) != 0) {
    return EADDRNOTAVAIL;
  }
  int err = 0;
  const int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    err = errno;
  } else {
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, res->ai_addr, res->ai_addrlen) != 0) err = errno;
    close(fd);
  }
  freeaddrinfo(res);
  return err;
}

void SendUnauthorized(mg_connection* conn) {
  constexpr char kBody[] = "unauthorized\n";
  mg_printf(conn,
            "HTTP/1.1 401 Unauthorized\r\n"
            "WWW-Authenticate: Basic realm=\"pathwise\", charset=\"UTF-8\"\r\n"
            "Content-Type: text/plain; charset=utf-8\r\n"
            "Content-Length: %zu\r\nCache-Control: no-store\r\n\r\n",
            sizeof(kBody) - 1);
  mg_write(conn, kBody, sizeof(kBody) - 1);
}

}  // namespace

absl::StatusOr<std::string> ToCivetListeningPorts(
    const std::string& listen_address) {
  const size_t colon = listen_address.rfind(':');
  if (colon == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid --listen_address \"", listen_address,
                     "\": want [host]:port, e.g. :9877 or 127.0.0.1:9877"));
  }
  const std::string host = listen_address.substr(0, colon);
  const std::string port = listen_address.substr(colon + 1);
  int p = 0;
  if (!absl::SimpleAtoi(port, &p) || p < 0 || p > 65535 ||
      !std::all_of(port.begin(), port.end(), [](char ch) {
        return absl::ascii_isdigit(static_cast<unsigned char>(ch));
      })) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid --listen_address \"", listen_address,
                     "\": bad port \"", port, "\""));
  }
  if (host.empty()) return port;  // all IPv4 interfaces
  if (host.front() == '[' || absl::StrContains(host, ':')) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid --listen_address \"", listen_address,
        "\": IPv6 is not supported (the HTTP server is built without it); "
        "use an IPv4 address, e.g. 127.0.0.1:9877, or :9877 for all"));
  }
  return absl::StrCat(host, ":", port);
}

std::vector<std::pair<std::string, std::string>> CivetOptions(
    const std::string& listening_ports, const HttpServerOptions& options) {
  return {
      {"listening_ports", listening_ports},
      {"num_threads", absl::StrCat(options.num_threads)},
      {"request_timeout_ms", absl::StrCat(options.request_timeout_ms)},
      {"enable_keep_alive", "no"},
      {"listen_backlog", absl::StrCat(options.listen_backlog)},
      {"max_request_size", absl::StrCat(options.max_request_size)},
      // Dispatch decodes the path itself, so that an encoded NUL is refused
      // instead of cutting the path short ("/metrics%00" is not /metrics).
      {"decode_url", "no"},
      // Answers are written whole with mg_write; no need for Nagle's delay.
      {"tcp_nodelay", "1"},
  };
}

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    const std::string& listen_address, HttpRoutes routes,
    const HttpServerOptions& server_options) {
  absl::StatusOr<std::string> ports = ToCivetListeningPorts(listen_address);
  if (!ports.ok()) return ports.status();
  const WebConfig& web = server_options.web;
  std::string pem;
  int pem_fd = -1;
  if (web.tls) {
    if (absl::Status s = PrepareCivetwebTls(); !s.ok()) return s;
    absl::StatusOr<int> fd = CombinedPem(*web.tls);
    if (!fd.ok()) return fd.status();
    pem_fd = *fd;
    pem = absl::StrCat("/proc/self/fd/", pem_fd);
    *ports += "s";  // civetweb: a TLS port
  }
  std::vector<std::pair<std::string, std::string>> pairs =
      CivetOptions(*ports, server_options);
  if (web.tls) AppendTlsOptions(*web.tls, pem, pairs);
  std::vector<const char*> options;
  for (const auto& [name, value] : pairs) {
    options.push_back(name.c_str());
    options.push_back(value.c_str());
  }
  options.push_back(nullptr);
  mg_callbacks callbacks;
  std::memset(&callbacks, 0, sizeof(callbacks));
  callbacks.log_message = &LogMessage;
  callbacks.http_error = &SendCivetError;

  callbacks.init_connection = &HttpServer::InitConnection;
  callbacks.connection_close = &HttpServer::ConnectionClose;

  std::shared_ptr<HttpServerCounters> counters =
      server_options.counters != nullptr
          ? server_options.counters
          : std::make_shared<HttpServerCounters>();
  std::unique_ptr<HttpServer> server(new HttpServer(
      std::move(routes), server_options.max_connections_per_client,
      web.tls.has_value(), std::move(counters)));
  if (!web.basic_auth_users.empty()) {
    server->auth_ = std::make_unique<BasicAuthenticator>(web.basic_auth_users);
  }
  mg_init_data init;
  std::memset(&init, 0, sizeof(init));
  init.callbacks = &callbacks;
  init.user_data = server.get();
  init.configuration_options = options.data();
  unsigned code = 0;
  char text[256] = {0};
  mg_error_data error;
  std::memset(&error, 0, sizeof(error));
  error.code = &code;
  error.text = text;
  error.text_buffer_size = sizeof(text);

  server->ctx_ = mg_start2(&init, &error);
  if (pem_fd >= 0) close(pem_fd);
  if (server->ctx_ == nullptr) {
    const int err = ProbeBindErrno(listen_address);
    if (err == EADDRINUSE) {
      return absl::UnavailableError(absl::StrCat(
          "cannot listen on ", listen_address, ": address already in use"));
    }
    const std::string why = err != 0       ? std::strerror(err)
                            : text[0] != 0 ? text
                                           : "civetweb failed to start";
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", listen_address, ": ", why));
  }
  server->host_ = listen_address.substr(0, listen_address.rfind(':'));
  mg_set_request_handler(server->ctx_, "/", &HttpServer::Dispatch,
                         server.get());
  return server;
}

namespace {

// civetweb's accept loop polls its listening sockets in 2 s slices and only
// looks at the stop flag between them, so mg_stop() alone takes up to 2 s.
// A connection to each listening port while it stops wakes the poll at once.
void PokeUntil(const std::string& host, const std::vector<int>& ports,
               const std::atomic<bool>& done) {
  while (!done.load()) {
    for (int port : ports) {
      const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0) continue;
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_port = htons(static_cast<uint16_t>(port));
      if (host.empty() ||
          inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      }
      connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
      close(fd);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

HttpServer::~HttpServer() {
  if (ctx_ == nullptr) return;
  const std::vector<int> ports = ListeningPorts();
  std::atomic<bool> stopped{false};
  std::thread poker([&] { PokeUntil(host_, ports, stopped); });
  mg_stop(ctx_);
  stopped = true;
  poker.join();
}

std::vector<int> HttpServer::ListeningPorts() const {
  mg_server_port ports[8];
  int n = mg_get_server_ports(ctx_, 8, ports);
  std::vector<int> out;
  for (int i = 0; i < n; ++i) out.push_back(ports[i].port);
  return out;
}

// The server of `conn`: civetweb's request_info.user_data is not set yet
// when a connection starts, the context's user data is.
HttpServer* HttpServer::Of(const mg_connection* conn) {
  return static_cast<HttpServer*>(mg_get_user_data(mg_get_context(conn)));
}

// civetweb 1.15 tells init_connection nothing about the connection (its
// request info is not valid yet), so the limit is enforced over every
// connection the server holds, found by its descriptors, whenever more than
// max_connections_per_client of them have a worker: below that no client
// can be over the limit, and nothing is scanned.
int HttpServer::InitConnection(const mg_connection* conn, void** conn_data) {
  HttpServer* server = Of(conn);
  *conn_data = &kCounted;
  const int active = server->active_.fetch_add(1) + 1;
  if (server->max_per_client_ > 0 && active > server->max_per_client_) {
    server->EnforceClientLimit();
  }
  return 0;
}

void HttpServer::ConnectionClose(const mg_connection* conn) {
  if (mg_get_user_connection_data(conn) == &kCounted) Of(conn)->active_--;
}

void HttpServer::EnforceClientLimit() {
  absl::MutexLock lock(&limit_mu_);
  // Connections refused before and not closed yet hold nothing for long;
  // they neither count nor are counted again.
  std::set<ino_t> refused;
  std::vector<ServerConnection> held;
  for (const ServerConnection& c : ServerConnections(ListeningPorts())) {
    if (refused_.count(c.inode) != 0) {
      refused.insert(c.inode);
    } else {
      held.push_back(c);
    }
  }
  for (size_t i : OverClientLimit(held, max_per_client_)) {
    RefuseConnection(held[i], tls_);
    refused.insert(held[i].inode);
    counters_->refused_client_limit++;
  }
  refused_.swap(refused);
}

int HttpServer::Dispatch(mg_connection* conn, void* self) {
  auto* server = static_cast<HttpServer*>(self);
  if (server->auth_ != nullptr &&
      !server->auth_->Check(mg_get_header(conn, "Authorization"))) {
    SendUnauthorized(conn);
    return 401;
  }
  const mg_request_info* ri = mg_get_request_info(conn);
  const std::string method = ri->request_method ? ri->request_method : "";
  const bool head_only = method == "HEAD";
  if (method != "GET" && !head_only) {
    Send(conn, {405, "text/plain; charset=utf-8", "method not allowed\n"},
         false);
    return 405;
  }
  const std::string raw = ri->local_uri ? ri->local_uri : "";
  std::string path(raw.size() + 1, '\0');
  const int n = mg_url_decode(raw.data(), static_cast<int>(raw.size()),
                              path.data(), static_cast<int>(path.size()), 0);
  path.resize(n < 0 ? 0 : static_cast<size_t>(n));
  if (n < 0 || path.find('\0') != std::string::npos) {
    Send(conn, {400, "text/plain; charset=utf-8", "bad request\n"}, false);
    return 400;
  }
  auto it = server->routes_.find(path);
  HttpResponse resp;
  if (it == server->routes_.end()) {
    resp = {404, "text/plain; charset=utf-8", "not found\n"};
  } else {
    const char* accept = mg_get_header(conn, "Accept");
    const HttpRequest request{accept ? accept : "",
                              ri->query_string ? ri->query_string : ""};
    try {
      resp = it->second(request);
    } catch (const std::exception& e) {
      resp = {500, "text/plain; charset=utf-8",
              absl::StrCat("internal error: ", e.what(), "\n")};
    }
  }
  Send(conn, resp, head_only);
  return resp.status;
}

}  // namespace pathwise::exporters

#include "exporters/http_server.h"

#include <civetweb.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace pathwise::exporters {
namespace {

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 503:
      return "Service Unavailable";
    default:
      return status < 400 ? "OK" : "Error";
  }
}

void Send(mg_connection* conn, const HttpResponse& r, bool head_only) {
  mg_printf(conn,
            "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
            "Cache-Control: no-store\r\n\r\n",
            r.status, Reason(r.status), r.content_type.c_str(), r.body.size());
  if (!head_only && !r.body.empty()) {
    mg_write(conn, r.body.data(), r.body.size());
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
  if (host.front() == '[' && host.back() == ']') {
    return absl::StrCat(host, ":", port);  // civetweb's IPv6 form
  }
  if (absl::StrContains(host, ':')) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid --listen_address \"", listen_address,
                     "\": put IPv6 addresses in brackets, e.g. [::1]:9877"));
  }
  return absl::StrCat(host, ":", port);
}

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    const std::string& listen_address, HttpRoutes routes, int num_threads) {
  absl::StatusOr<std::string> ports = ToCivetListeningPorts(listen_address);
  if (!ports.ok()) return ports.status();
  const std::string threads = std::to_string(num_threads);
  const char* options[] = {"listening_ports",
                           ports->c_str(),
                           "num_threads",
                           threads.c_str(),
                           "request_timeout_ms",
                           "10000",
                           "enable_keep_alive",
                           "yes",
                           nullptr};
  mg_callbacks callbacks;
  std::memset(&callbacks, 0, sizeof(callbacks));
  callbacks.log_message = &LogMessage;
  callbacks.http_error = &SendCivetError;

  std::unique_ptr<HttpServer> server(new HttpServer(std::move(routes)));
  mg_init_data init;
  std::memset(&init, 0, sizeof(init));
  init.callbacks = &callbacks;
  init.user_data = server.get();
  init.configuration_options = options;
  unsigned code = 0;
  char text[256] = {0};
  mg_error_data error;
  std::memset(&error, 0, sizeof(error));
  error.code = &code;
  error.text = text;
  error.text_buffer_size = sizeof(text);

  server->ctx_ = mg_start2(&init, &error);
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
  mg_set_request_handler(server->ctx_, "/", &HttpServer::Dispatch,
                         server.get());
  return server;
}

HttpServer::~HttpServer() {
  if (ctx_ != nullptr) mg_stop(ctx_);
}

std::vector<int> HttpServer::ListeningPorts() const {
  mg_server_port ports[8];
  int n = mg_get_server_ports(ctx_, 8, ports);
  std::vector<int> out;
  for (int i = 0; i < n; ++i) out.push_back(ports[i].port);
  return out;
}

int HttpServer::Dispatch(mg_connection* conn, void* self) {
  auto* server = static_cast<HttpServer*>(self);
  const mg_request_info* ri = mg_get_request_info(conn);
  const std::string method = ri->request_method ? ri->request_method : "";
  const bool head_only = method == "HEAD";
  if (method != "GET" && !head_only) {
    Send(conn, {405, "text/plain; charset=utf-8", "method not allowed\n"},
         false);
    return 405;
  }
  const char* uri = ri->local_uri ? ri->local_uri : "";
  auto it = server->routes_.find(uri);
  HttpResponse resp;
  if (it == server->routes_.end()) {
    resp = {404, "text/plain; charset=utf-8", "not found\n"};
  } else {
    try {
      resp = it->second();
    } catch (const std::exception& e) {
      resp = {500, "text/plain; charset=utf-8",
              absl::StrCat("internal error: ", e.what(), "\n")};
    }
  }
  Send(conn, resp, head_only);
  return resp.status;
}

}  // namespace pathwise::exporters

// SPDX-License-Identifier: Apache-2.0
#include "exporters/listen_socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace pathwise::exporters {
namespace {

// RFC 1123 host name: dot-separated labels of letters, digits and inner
// hyphens.
bool IsHostName(absl::string_view host) {
  if (host.empty() || host.size() > 253) return false;
  for (absl::string_view label : absl::StrSplit(host, '.')) {
    if (label.empty() || label.size() > 63 || label.front() == '-' ||
        label.back() == '-') {
      return false;
    }
    for (char c : label) {
      if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-') {
        return false;
      }
    }
  }
  return true;
}

absl::Status Bad(absl::string_view why) {
  return absl::InvalidArgumentError(why);
}

}  // namespace

absl::StatusOr<ListenAddress> ParseListenAddress(absl::string_view text) {
  const size_t colon = text.rfind(':');
  if (colon == absl::string_view::npos) {
    return Bad("want [host]:port, e.g. :9877, 127.0.0.1:9877 or [::]:9877");
  }
  absl::string_view host = text.substr(0, colon);
  const absl::string_view port = text.substr(colon + 1);
  ListenAddress a;
  if (port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != absl::string_view::npos ||
      !absl::SimpleAtoi(port, &a.port) || a.port > 65535) {
    return Bad(absl::StrCat("bad port \"", port, "\""));
  }
  if (absl::ConsumePrefix(&host, "[")) {
    if (!absl::ConsumeSuffix(&host, "]")) {
      return Bad(absl::StrCat("bad IPv6 address \"[", host,
                              "\" (want [address]:port)"));
    }
    in6_addr a6;
    if (inet_pton(AF_INET6, std::string(host).c_str(), &a6) != 1) {
      return Bad(absl::StrCat("bad IPv6 address \"", host, "\""));
    }
    a.host = std::string(host);
    a.bracketed = true;
    return a;
  }
  if (absl::StrContains(host, ':')) {
    return Bad(
        absl::StrCat("an IPv6 address needs brackets: [", host, "]:", port));
  }
  if (!host.empty() &&
      host.find_first_not_of("0123456789.") == absl::string_view::npos) {
    in_addr a4;
    if (inet_pton(AF_INET, std::string(host).c_str(), &a4) != 1) {
      return Bad(absl::StrCat("bad IPv4 address \"", host,
                              "\" (want four numbers 0..255)"));
    }
  } else if (!host.empty() && !IsHostName(host)) {
    return Bad(
        absl::StrCat("bad host \"", host, "\" (want an IP address or a name)"));
  }
  a.host = std::string(host);
  return a;
}

namespace {

// A socket bound to `ai` and listening; errno on failure (0 on success).
int BindListen(const addrinfo& ai, bool dual_stack, int backlog, int* out) {
  const int fd = socket(
      ai.ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, ai.ai_protocol);
  if (fd < 0) return errno;
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (ai.ai_family == AF_INET6) {
    const int v6only = dual_stack ? 0 : 1;
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof(v6only));
  }
  if (bind(fd, ai.ai_addr, ai.ai_addrlen) != 0 || listen(fd, backlog) != 0) {
    const int err = errno;
    close(fd);
    return err;
  }
  *out = fd;
  return 0;
}

}  // namespace

absl::StatusOr<int> OpenListenSocket(absl::string_view text, int backlog) {
  absl::StatusOr<ListenAddress> a = ParseListenAddress(text);
  auto fail = [&](absl::string_view why) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", text, ": ", why));
  };
  if (!a.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid listen address \"", text, "\": ", a.status().message()));
  }
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  hints.ai_family = AF_UNSPEC;
  const std::string port = absl::StrCat(a->port);
  // "" and "::" mean every interface, served dual-stack from one socket.
  const bool any = a->host.empty() || a->host == "::";
  const char* host = a->host.empty() ? "::" : a->host.c_str();
  // A name listens where it resolves, IPv4 first, as Go's listeners do:
  // "localhost" is then 127.0.0.1, which IPv4 clients reach.
  const bool name =
      !a->bracketed && !a->host.empty() &&
      a->host.find_first_not_of("0123456789.") != std::string::npos;
  if (name) hints.ai_family = AF_INET;
  addrinfo* res = nullptr;
  int gai = getaddrinfo(host, port.c_str(), &hints, &res);
  if (gai != 0 && name) {
    hints.ai_family = AF_UNSPEC;
    gai = getaddrinfo(host, port.c_str(), &hints, &res);
  }
  if (gai != 0) {
    return fail(
        absl::StrCat("cannot resolve \"", a->host, "\": ", gai_strerror(gai)));
  }
  int fd = -1;
  int err = BindListen(*res, any, backlog, &fd);
  freeaddrinfo(res);
  if (err == EAFNOSUPPORT && a->host.empty()) {
    // A host without IPv6 (ipv6.disable=1): every IPv4 interface instead.
    res = nullptr;
    hints.ai_family = AF_INET;
    if (getaddrinfo(nullptr, port.c_str(), &hints, &res) != 0) {
      return fail("cannot resolve the IPv4 wildcard address");
    }
    err = BindListen(*res, false, backlog, &fd);
    freeaddrinfo(res);
  }
  if (err != 0) {
    return fail(err == EADDRINUSE ? "address already in use"
                                  : std::strerror(err));
  }
  return fd;
}

int LocalPort(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return 0;
  if (ss.ss_family == AF_INET) {
    return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  }
  if (ss.ss_family == AF_INET6) {
    return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
  }
  return 0;
}

}  // namespace pathwise::exporters

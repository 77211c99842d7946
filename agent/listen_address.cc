#include "agent/listen_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "exporters/http_server.h"

namespace pathwise::agent {
namespace {

// The HTTP server's civetweb (Debian's 1.15) is built without IPv6, so an
// IPv6 listen address could never be bound: refuse it here, with the reason.
std::string NotIpv6(absl::string_view text) {
  const size_t colon = text.rfind(':');
  const absl::string_view host =
      colon == absl::string_view::npos ? text : text.substr(0, colon);
  if (absl::StrContains(host, '[') || absl::StrContains(host, ':')) {
    return "IPv6 is not supported (the HTTP server is built without it); use "
           "an IPv4 address, e.g. 127.0.0.1:9877, or :9877 for all";
  }
  return "";
}

// Whether `host` is a host name as RFC 1123 spells one: dot-separated
// labels of letters, digits and inner hyphens.
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

// What is wrong with the host of a [host]:port the server took: civetweb
// reads an IPv4 address with sscanf, so "999.1.1.1" would listen on
// 231.1.1.1 and "1.2.3" on 1.2.0.3; "" for a good one.
std::string HostProblem(absl::string_view host) {
  if (host.empty()) return "";
  if (host.find_first_not_of("0123456789.") == absl::string_view::npos) {
    in_addr a4;
    return inet_pton(AF_INET, std::string(host).c_str(), &a4) == 1
               ? ""
               : absl::StrCat("bad IPv4 address \"", host,
                              "\" (want four numbers 0..255)");
  }
  return IsHostName(host) ? ""
                          : absl::StrCat("bad host \"", host,
                                         "\" (want an IP address or a name)");
}

// The syntax the HTTP server accepts, checked here so that a bad address is
// a usage error (exit 2) like any other bad flag, not a failure to start.
}  // namespace

std::string ParseListenAddress(absl::string_view text, std::string* v) {
  *v = std::string(text);
  if (text.empty()) return "must not be empty";
  if (std::string e = NotIpv6(text); !e.empty()) return e;
  absl::StatusOr<std::string> ports = exporters::ToCivetListeningPorts(*v);
  if (!ports.ok()) {
    // The server's message names the flag and the value, which the usage
    // error does already.
    absl::string_view why = ports.status().message();
    const std::string prefix =
        absl::StrCat("invalid --listen_address \"", text, "\": ");
    if (absl::StartsWith(why, prefix)) why.remove_prefix(prefix.size());
    return std::string(why);
  }
  return HostProblem(text.substr(0, text.rfind(':')));
}

}  // namespace pathwise::agent

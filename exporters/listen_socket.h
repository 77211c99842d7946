// SPDX-License-Identifier: Apache-2.0
// --web.listen-address: its syntax, and the listening socket the HTTP server
// serves on. The server (libmicrohttpd) is handed a socket made here, so
// that the address rules and the bind error are ours: IPv4, IPv6 and
// dual-stack alike, and "address already in use" said as such.
#ifndef PATHWISE_EXPORTERS_LISTEN_SOCKET_H_
#define PATHWISE_EXPORTERS_LISTEN_SOCKET_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace pathwise::exporters {

// "[host]:port": ":9877" (every interface, IPv6 and IPv4 where the host
// has IPv6, else IPv4), "127.0.0.1:9877", "[::1]:9877", "[::]:9877"
// (every interface, dual-stack), "localhost:9877" (a name, resolved when
// binding).
struct ListenAddress {
  std::string host;        // without brackets; "" for every interface
  bool bracketed = false;  // written as [IPv6]
  int port = 0;
};

// The address, or InvalidArgument saying what is wrong with it (without
// repeating the text: callers name the flag and the value).
absl::StatusOr<ListenAddress> ParseListenAddress(absl::string_view text);

// A bound, listening, non-blocking TCP socket for `address` with `backlog`.
// "[::]" and "" listen dual-stack (IPV6_V6ONLY off; "" falls back to IPv4
// on a host without IPv6). Errors read "cannot listen on TEXT: why".
absl::StatusOr<int> OpenListenSocket(absl::string_view text, int backlog);

// The local port of a bound socket, 0 if unknown.
int LocalPort(int fd);

}  // namespace pathwise::exporters

#endif  // PATHWISE_EXPORTERS_LISTEN_SOCKET_H_

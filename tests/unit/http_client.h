// SPDX-License-Identifier: Apache-2.0
// A minimal blocking HTTP/1.0 client over loopback for the in-process server
// tests: sends one request and returns the whole response.
#ifndef PATHWISE_TESTS_UNIT_HTTP_CLIENT_H_
#define PATHWISE_TESTS_UNIT_HTTP_CLIENT_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"

namespace pathwise::testing {

// A connected loopback socket to `port` whose reads and writes give up
// after `timeout_ms` (so that a test fails instead of hanging); -1 on
// failure.
inline int Connect(int port, int timeout_ms = 5000) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Reads one HTTP response from `fd`: to the end of its Content-Length body
// (none for a HEAD), or until the server closes, or until the receive
// timeout. The server keeps connections alive, so "until close" alone
// would wait for its idle timeout.
inline std::string ReadResponse(int fd, bool head = false) {
  std::string out;
  char buf[4096];
  while (true) {
    const size_t end = out.find("\r\n\r\n");
    if (end != std::string::npos) {
      std::string lower = out.substr(0, end);
      for (char& c : lower) c = static_cast<char>(std::tolower(c));
      const size_t cl = lower.find("\r\ncontent-length:");
      if (cl != std::string::npos) {
        const size_t want =
            head ? 0 : std::strtoull(lower.c_str() + cl + 17, nullptr, 10);
        if (out.size() >= end + 4 + want) return out;
      }
    }
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n <= 0) return out;
    out.append(buf, static_cast<size_t>(n));
  }
}

// Sends `raw` as is to 127.0.0.1:`port`; returns the first response read
// back (see ReadResponse), or "connect failed".
inline std::string RawRequest(int port, const std::string& raw) {
  const int fd = Connect(port);
  if (fd < 0) return "connect failed";
  size_t sent = 0;
  while (sent < raw.size()) {
    const ssize_t n =
        send(fd, raw.data() + sent, raw.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may answer and close early
    sent += static_cast<size_t>(n);
  }
  std::string out = ReadResponse(fd, raw.rfind("HEAD ", 0) == 0);
  close(fd);
  return out;
}

inline std::string Request(int port, const std::string& method,
                           const std::string& path) {
  return RawRequest(
      port, absl::StrCat(method, " ", path, " HTTP/1.0\r\nHost: x\r\n\r\n"));
}

// The body of a response (after the blank line), "" without one.
inline std::string Body(const std::string& response) {
  const size_t i = response.find("\r\n\r\n");
  return i == std::string::npos ? "" : response.substr(i + 4);
}

}  // namespace pathwise::testing

#endif  // PATHWISE_TESTS_UNIT_HTTP_CLIENT_H_

// SPDX-License-Identifier: Apache-2.0
// The HTTP server's connections: admission and eviction (ConnGuard), the
// deadline sweep, and client certificates set on each TLS session before
// its handshake.
#include <gnutls/gnutls.h>
#include <linux/sockios.h>  // SIOCINQ
#include <linux/tcp.h>  // tcp_info with tcpi_bytes_received (glibc's is older)
#include <microhttpd.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cstddef>
#include <optional>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "exporters/http_server_impl.h"

namespace pathwise::exporters {
namespace http_internal {

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

}  // namespace http_internal
namespace {

// TCP_CLOSE_WAIT of the kernel's include/net/tcp_states.h (not in the uapi
// headers): the peer has sent its FIN.
constexpr uint8_t kTcpCloseWait = 8;

// The client sent its FIN and the server has read everything before it.
bool PeerClosed(int fd) {
  tcp_info info{};
  socklen_t len = sizeof(info);
  int unread = 0;
  return getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) == 0 &&
         info.tcpi_state == kTcpCloseWait && ioctl(fd, SIOCINQ, &unread) == 0 &&
         unread == 0;
}

using http_internal::BytesReceived;
using http_internal::Conn;

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
      [[maybe_unused]] ssize_t n =
          send(conn->fd, kRefusal, sizeof(kRefusal) - 1,
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
  while (!stop_reaper.WaitForNotificationWithTimeout(
      absl::Milliseconds(options.sweep_interval_ms))) {
    absl::MutexLock lock(&mu);
    for (const auto& [id, reason] :
         guard.Sweep(absl::Now(), &BytesReceived, &PeerClosed)) {
      if (reason) counters->CountRefused(*reason);
      Shut(guard.Handle(id));
    }
  }
}

}  // namespace pathwise::exporters

// The HTTP server's per-client connection limit: which of the connections
// the server holds (accepted, with a worker or queued for one) to turn away
// because their client address holds more than its share.
#ifndef PATHWISE_EXPORTERS_CLIENT_LIMIT_H_
#define PATHWISE_EXPORTERS_CLIENT_LIMIT_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <vector>

namespace pathwise::exporters {

// What the server counts about connections it turned away; shared between
// the server (which counts) and the /metrics route (which exports).
struct HttpServerCounters {
  // Connections shut unserved because their client address already held
  // --web.max_connections_per_client of the server's connections.
  std::atomic<uint64_t> refused_client_limit{0};
};

// One accepted connection of the server.
struct ServerConnection {
  uint32_t client = 0;  // the client's IPv4 address (network order)
  ino_t inode = 0;      // the socket's; sockets made later mostly higher
  int fd = -1;
};

// The connections to refuse so that no client address holds more than
// `max_per_client` (> 0) of `held`: for each address over it, all but the
// max_per_client with the lowest inodes (roughly its newest connections are
// refused: the kernel numbers sockets in per-CPU batches). Indexes into
// `held`, ascending.
std::vector<size_t> OverClientLimit(const std::vector<ServerConnection>& held,
                                    int max_per_client);

// The server's accepted IPv4 connections: every socket of this process whose
// local port is one of `local_ports` and that has a peer.
std::vector<ServerConnection> ServerConnections(
    const std::vector<int>& local_ports);

// Turns a connection away at once: a 503 if the socket takes it without
// blocking (plain HTTP only; on a TLS connection it would be noise), then
// both directions shut, so that the worker that has it, or takes it from
// civetweb's queue, sees the end of the stream instead of waiting for a
// request until the deadline. The inode is checked again right before:
// the descriptor must still be that connection's.
void RefuseConnection(const ServerConnection& c, bool tls);

}  // namespace pathwise::exporters

#endif  // PATHWISE_EXPORTERS_CLIENT_LIMIT_H_

// SPDX-License-Identifier: Apache-2.0
// The HTTP server's bookkeeping of its connections: which to admit, which
// to close to make room, and which are past their deadline. Pure logic (no
// sockets, the clock passed in), so every rule tests without a server; the
// server (exporters/http_server.cc) holds one under its lock and does the
// closing.
//
// Why evict rather than refuse: an event-driven server holds an idle
// connection for the price of a descriptor, so the limits only bound
// memory. When a client address is at its limit, a new connection from it
// closes one of that address's connections that has no request in
// progress: first the one silent longest (nothing received since accept
// or since its last answer), else the one waiting longest (idle between
// requests, or still sending its headers). A client that connects and
// sends its request at once, like a scraper, is then served even behind
// the same NAT address as a client holding hundreds of stalled sockets:
// those push out each other, the silent ones first. A connection whose
// request is being answered is never evicted; it is bounded by the write
// deadline instead.
#ifndef PATHWISE_EXPORTERS_CONN_GUARD_H_
#define PATHWISE_EXPORTERS_CONN_GUARD_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"

namespace pathwise::exporters {

// Why the server closed a connection before serving it (or while serving
// it); the `reason` label of pathwise_http_connections_refused_total.
enum class RefuseReason {
  kClientLimit,     // its address held max_per_client connections
  kTotalLimit,      // the server held max_total connections
  kRequestTimeout,  // TLS handshake and headers not complete in time
  kWriteTimeout,    // the answer not taken by the client in time
};
inline constexpr int kRefuseReasons = 4;
const char* RefuseReasonLabel(RefuseReason r);

// What the server counts about its connections; shared between the server
// (which counts) and the /metrics route (which exports).
struct HttpServerCounters {
  std::atomic<int64_t> open{0};
  std::atomic<uint64_t> accepted{0};
  std::array<std::atomic<uint64_t>, kRefuseReasons> refused{};
  // Responses sent gzip-compressed.
  std::atomic<uint64_t> gzip_responses{0};

  uint64_t Refused(RefuseReason r) const {
    return refused[static_cast<int>(r)].load();
  }
  void CountRefused(RefuseReason r) { refused[static_cast<int>(r)]++; }
};

struct ConnLimits {
  int max_total = 1024;
  int max_per_client = 512;  // 0: no per-address limit
  // From accept (or from the first byte of a later request on a kept-alive
  // connection) to the end of the request's headers, TLS handshake included.
  absl::Duration request_timeout = absl::Seconds(2);
  // From the end of the headers to the answer written.
  absl::Duration write_timeout = absl::Seconds(10);
  // A kept-alive connection waiting for its next request.
  absl::Duration idle_timeout = absl::Seconds(120);
};

// The key a client address is limited by: an IPv4 address (IPv4-mapped
// IPv6 addresses included) as itself, an IPv6 address by its /64, which is
// what one host or one site is given: a client with a /64 must not get
// 2^64 times the limit.
std::string ClientKey(const void* sockaddr, size_t len);

class ConnGuard {
 public:
  using Id = uint64_t;

  explicit ConnGuard(ConnLimits limits) : limits_(limits) {}

  struct Admission {
    bool admitted = true;
    RefuseReason reason = RefuseReason::kClientLimit;  // when not admitted
    // Connections to close to make room, each with why (admitted only).
    std::vector<std::pair<Id, RefuseReason>> evict;
  };
  // How much a connection has received so far, by its handle (nullopt if
  // unknown): whether it is silent, and whether a kept-alive one has begun
  // its next request.
  using BytesIn = std::function<std::optional<uint64_t>(int handle)>;

  // A connection accepted from `client` (ClientKey); `handle` is the
  // caller's (a descriptor), given back by Handle().
  Admission Admit(Id id, const std::string& client, int handle, absl::Time now,
                  const BytesIn& bytes_in);
  // The connection is gone (after it was admitted, evicted or not).
  void Closed(Id id);
  // Its request's headers are complete: the write deadline applies.
  void RequestStarted(Id id, absl::Time now);
  // Its answer is written; `bytes_in` is what it has received so far (the
  // mark beyond which a byte means the next request has begun).
  void RequestDone(Id id, absl::Time now, uint64_t bytes_in);

  // Whether the client has closed its side (sent FIN), by handle.
  using PeerGone = std::function<bool(int handle)>;

  // Connections past a deadline, to close. `bytes_in(handle)` reads how
  // much a kept-alive connection has received (nullopt if unknown).
  // Returned connections count as closed from now on; an idle kept-alive
  // connection past idle_timeout comes back as nullopt reason, and so
  // does one without a request in progress whose client has closed its
  // side (`peer_gone`) on two sweeps in a row: it will send nothing more,
  // and libmicrohttpd, which reads on edges, may not see that end until
  // the deadline.
  std::vector<std::pair<Id, std::optional<RefuseReason>>> Sweep(
      absl::Time now, const BytesIn& bytes_in, const PeerGone& peer_gone);

  // The caller's handle of a connection still known, else -1.
  int Handle(Id id) const;
  // Open connections, not counting those already told to close.
  int open() const { return open_; }
  int open_from(const std::string& client) const;

 private:
  enum class Phase { kWaiting, kReading, kAnswering };
  struct Conn {
    std::string client;
    int handle = -1;
    Phase phase = Phase::kWaiting;
    absl::Time since;  // when the phase began
    uint64_t requests = 0;
    uint64_t mark = 0;  // bytes received when the last answer was done
    bool closing = false;
    bool gone_seen = false;  // the last sweep found the client gone
  };
  // The connection of `client` ("" for any client) to evict: the one
  // silent longest, else the one waiting longest without a request in
  // progress; nullopt if every one is being answered.
  std::optional<Id> Victim(const std::string& client,
                           const BytesIn& bytes_in) const;
  void MarkClosing(Id id);

  ConnLimits limits_;
  absl::flat_hash_map<Id, Conn> conns_;
  // Open (not closing) connections per client.
  std::map<std::string, std::vector<Id>> by_client_;
  int open_ = 0;
};

}  // namespace pathwise::exporters

#endif  // PATHWISE_EXPORTERS_CONN_GUARD_H_

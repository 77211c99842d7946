// SPDX-License-Identifier: Apache-2.0
#include "exporters/conn_guard.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace pathwise::exporters {

const char* RefuseReasonLabel(RefuseReason r) {
  switch (r) {
    case RefuseReason::kClientLimit:
      return "client_limit";
    case RefuseReason::kTotalLimit:
      return "total_limit";
    case RefuseReason::kRequestTimeout:
      return "request_timeout";
    case RefuseReason::kWriteTimeout:
      return "write_timeout";
  }
  return "unknown";
}

std::string ClientKey(const void* sockaddr_ptr, size_t len) {
  char text[INET6_ADDRSTRLEN] = {0};
  if (sockaddr_ptr == nullptr || len < sizeof(sa_family_t)) return "?";
  sockaddr_storage ss{};
  std::memcpy(&ss, sockaddr_ptr, std::min(len, sizeof(ss)));
  if (ss.ss_family == AF_INET && len >= sizeof(sockaddr_in)) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
    return text;
  }
  if (ss.ss_family == AF_INET6 && len >= sizeof(sockaddr_in6)) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&ss);
    if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
      in_addr v4;
      std::memcpy(&v4, &in6->sin6_addr.s6_addr[12], sizeof(v4));
      inet_ntop(AF_INET, &v4, text, sizeof(text));
      return text;
    }
    in6_addr prefix = in6->sin6_addr;
    std::memset(&prefix.s6_addr[8], 0, 8);
    inet_ntop(AF_INET6, &prefix, text, sizeof(text));
    return absl::StrCat(text, "/64");
  }
  return "?";
}

ConnGuard::Admission ConnGuard::Admit(Id id, const std::string& client,
                                      int handle, absl::Time now,
                                      const BytesIn& bytes_in) {
  Admission a;
  const int per_client = open_from(client);
  if (limits_.max_per_client > 0 && per_client >= limits_.max_per_client) {
    const std::optional<Id> victim = Victim(client, bytes_in);
    if (!victim) {
      a.admitted = false;
      a.reason = RefuseReason::kClientLimit;
      return a;
    }
    a.evict.push_back({*victim, RefuseReason::kClientLimit});
    MarkClosing(*victim);
  } else if (limits_.max_total > 0 && open_ >= limits_.max_total) {
    // Room is made at the expense of the address holding the most.
    std::string busiest;
    size_t most = 0;
    for (const auto& [c, ids] : by_client_) {
      if (ids.size() > most) {
        most = ids.size();
        busiest = c;
      }
    }
    std::optional<Id> victim = Victim(busiest, bytes_in);
    if (!victim) victim = Victim("", bytes_in);
    if (!victim) {
      a.admitted = false;
      a.reason = RefuseReason::kTotalLimit;
      return a;
    }
    a.evict.push_back({*victim, RefuseReason::kTotalLimit});
    MarkClosing(*victim);
  }
  Conn& c = conns_[id];
  c.client = client;
  c.handle = handle;
  c.since = now;
  by_client_[client].push_back(id);
  ++open_;
  return a;
}

std::optional<ConnGuard::Id> ConnGuard::Victim(const std::string& client,
                                               const BytesIn& bytes_in) const {
  std::optional<Id> silent;
  std::optional<Id> waiting;
  absl::Time silent_since = absl::InfiniteFuture();
  absl::Time waiting_since = absl::InfiniteFuture();
  auto consider = [&](Id id) {
    const Conn& c = conns_.at(id);
    if (c.phase == Phase::kAnswering) return;
    if (c.since < waiting_since) {
      waiting_since = c.since;
      waiting = id;
    }
    if (c.phase == Phase::kWaiting && c.since < silent_since) {
      const std::optional<uint64_t> in = bytes_in(c.handle);
      if (in && *in <= c.mark) {
        silent_since = c.since;
        silent = id;
      }
    }
  };
  if (client.empty()) {
    for (const auto& [k, ids] : by_client_) {
      for (Id id : ids) consider(id);
    }
  } else if (auto it = by_client_.find(client); it != by_client_.end()) {
    for (Id id : it->second) consider(id);
  }
  return silent ? silent : waiting;
}

void ConnGuard::MarkClosing(Id id) {
  auto it = conns_.find(id);
  if (it == conns_.end() || it->second.closing) return;
  it->second.closing = true;
  --open_;
  auto bc = by_client_.find(it->second.client);
  if (bc != by_client_.end()) {
    std::erase(bc->second, id);
    if (bc->second.empty()) by_client_.erase(bc);
  }
}

void ConnGuard::Closed(Id id) {
  MarkClosing(id);
  conns_.erase(id);
}

void ConnGuard::RequestStarted(Id id, absl::Time now) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  it->second.phase = Phase::kAnswering;
  it->second.since = now;
}

void ConnGuard::RequestDone(Id id, absl::Time now, uint64_t bytes_in) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  Conn& c = it->second;
  c.phase = Phase::kWaiting;
  c.since = now;
  c.requests++;
  c.mark = bytes_in;
}

std::vector<std::pair<ConnGuard::Id, std::optional<RefuseReason>>>
ConnGuard::Sweep(absl::Time now, const BytesIn& bytes_in,
                 const PeerGone& peer_gone) {
  std::vector<std::pair<Id, std::optional<RefuseReason>>> out;
  for (auto& [id, c] : conns_) {
    if (c.closing) continue;
    // Gone on two sweeps in a row: a client that sent a whole request and
    // then its FIN is answering by the second (the server reads and starts
    // the request at once), so only a partial request is let go.
    if (c.phase != Phase::kAnswering && peer_gone(c.handle)) {
      if (c.gone_seen) {
        out.push_back({id, std::nullopt});
        continue;
      }
      c.gone_seen = true;
    } else {
      c.gone_seen = false;
    }
    const absl::Duration age = now - c.since;
    switch (c.phase) {
      case Phase::kAnswering:
        if (age > limits_.write_timeout) {
          out.push_back({id, RefuseReason::kWriteTimeout});
        }
        break;
      case Phase::kReading:
        if (age > limits_.request_timeout) {
          out.push_back({id, RefuseReason::kRequestTimeout});
        }
        break;
      case Phase::kWaiting:
        if (c.requests == 0) {
          // A new connection: its first request (and TLS handshake) must
          // come within the request deadline, whether bytes trickle or not.
          if (age > limits_.request_timeout) {
            out.push_back({id, RefuseReason::kRequestTimeout});
          }
          break;
        }
        if (std::optional<uint64_t> in = bytes_in(c.handle);
            in && *in > c.mark) {
          c.phase = Phase::kReading;  // the next request has begun
          c.since = now;
        } else if (age > limits_.idle_timeout) {
          out.push_back({id, std::nullopt});
        }
        break;
    }
  }
  for (const auto& [id, reason] : out) MarkClosing(id);
  return out;
}

int ConnGuard::Handle(Id id) const {
  auto it = conns_.find(id);
  return it == conns_.end() ? -1 : it->second.handle;
}

int ConnGuard::open_from(const std::string& client) const {
  auto it = by_client_.find(client);
  return it == by_client_.end() ? 0 : static_cast<int>(it->second.size());
}

}  // namespace pathwise::exporters

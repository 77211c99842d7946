#include "exporters/client_limit.h"

#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <unordered_map>

#include "absl/strings/numbers.h"

namespace pathwise::exporters {

std::vector<size_t> OverClientLimit(const std::vector<ServerConnection>& held,
                                    int max_per_client) {
  std::unordered_map<uint32_t, std::vector<size_t>> by_client;
  for (size_t i = 0; i < held.size(); ++i) {
    by_client[held[i].client].push_back(i);
  }
  std::vector<size_t> refuse;
  const size_t keep = static_cast<size_t>(std::max(max_per_client, 0));
  for (auto& [client, idx] : by_client) {
    if (idx.size() <= keep) continue;
    std::sort(idx.begin(), idx.end(), [&held](size_t a, size_t b) {
      return held[a].inode < held[b].inode;
    });
    refuse.insert(refuse.end(), idx.begin() + static_cast<long>(keep),
                  idx.end());
  }
  std::sort(refuse.begin(), refuse.end());
  return refuse;
}

std::vector<ServerConnection> ServerConnections(
    const std::vector<int>& local_ports) {
  std::vector<ServerConnection> out;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return out;
  const int own = dirfd(dir);
  while (const dirent* e = readdir(dir)) {
    int fd = -1;
    if (!absl::SimpleAtoi(e->d_name, &fd) || fd == own) continue;
    sockaddr_in local{};
    socklen_t len = sizeof(local);
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) != 0 ||
        local.sin_family != AF_INET ||
        std::find(local_ports.begin(), local_ports.end(),
                  ntohs(local.sin_port)) == local_ports.end()) {
      continue;
    }
    sockaddr_in peer{};
    len = sizeof(peer);
    struct stat st;
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0 ||
        fstat(fd, &st) != 0) {
      continue;  // the listening socket, or closed meanwhile
    }
    out.push_back({peer.sin_addr.s_addr, st.st_ino, fd});
  }
  closedir(dir);
  return out;
}

void RefuseConnection(const ServerConnection& c, bool tls) {
  struct stat st;
  if (fstat(c.fd, &st) != 0 || st.st_ino != c.inode) return;
  if (!tls) {
    constexpr char kAnswer[] =
        "HTTP/1.1 503 Service Unavailable\r\n"
        "Content-Type: text/plain; charset=utf-8\r\nContent-Length: 39\r\n"
        "Connection: close\r\n\r\n"
        "too many connections from your address\n";
    send(c.fd, kAnswer, sizeof(kAnswer) - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
  }
  shutdown(c.fd, SHUT_RDWR);
}

}  // namespace pathwise::exporters

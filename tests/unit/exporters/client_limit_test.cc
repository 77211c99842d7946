// The per-client connection limit's choice of connections to refuse, and
// the scan of this process's sockets it works from.
#include "exporters/client_limit.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pathwise::exporters {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

uint32_t Ip(const char* a) {
  in_addr out{};
  inet_pton(AF_INET, a, &out);
  return out.s_addr;
}

TEST(OverClientLimit, AtOrBelowTheLimitNothingIsRefused) {
  const std::vector<ServerConnection> held = {{Ip("10.0.0.1"), 10, 5},
                                              {Ip("10.0.0.1"), 11, 6},
                                              {Ip("10.0.0.2"), 12, 7}};
  EXPECT_THAT(OverClientLimit(held, 2), IsEmpty());
  EXPECT_THAT(OverClientLimit({}, 1), IsEmpty());
}

// The newest connections (highest inode) of an address over its limit are
// refused, whatever order the descriptors came in; other addresses keep
// theirs.
TEST(OverClientLimit, RefusesTheNewestBeyondTheLimitPerAddress) {
  const std::vector<ServerConnection> held = {
      {Ip("10.0.0.1"), 50, 3},  // 0: newest of .1
      {Ip("10.0.0.2"), 20, 4},  // 1
      {Ip("10.0.0.1"), 10, 5},  // 2: oldest of .1
      {Ip("10.0.0.1"), 30, 6},  // 3
      {Ip("10.0.0.2"), 21, 7},  // 4
      {Ip("10.0.0.1"), 40, 8},  // 5
  };
  EXPECT_THAT(OverClientLimit(held, 2), ElementsAre(0, 5));
  EXPECT_THAT(OverClientLimit(held, 1), ElementsAre(0, 3, 4, 5));
}

// The scan finds the server side of each accepted connection (local port =
// the listening port), not the listening socket, not the client side.
TEST(ServerConnections, FindsTheAcceptedSocketsOfAPort) {
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)),
            0);
  ASSERT_EQ(listen(listener, 8), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const int port = ntohs(addr.sin_port);

  std::vector<int> clients;
  std::vector<int> accepted;
  for (const char* from : {"127.0.0.2", "127.0.0.3", "127.0.0.3"}) {
    const int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in src{};
    src.sin_family = AF_INET;
    src.sin_addr.s_addr = Ip(from);
    ASSERT_EQ(bind(c, reinterpret_cast<sockaddr*>(&src), sizeof(src)), 0);
    ASSERT_EQ(connect(c, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    clients.push_back(c);
    accepted.push_back(accept(listener, nullptr, nullptr));
    ASSERT_GE(accepted.back(), 0);
  }
  const std::vector<ServerConnection> found = ServerConnections({port});
  std::vector<int> fds;
  for (const ServerConnection& c : found) fds.push_back(c.fd);
  EXPECT_THAT(fds, UnorderedElementsAre(accepted[0], accepted[1], accepted[2]));
  for (const ServerConnection& c : found) {
    EXPECT_EQ(c.client,
              c.fd == accepted[0] ? Ip("127.0.0.2") : Ip("127.0.0.3"));
  }
  // One of .3's two is beyond a limit of 1.
  const std::vector<size_t> refuse = OverClientLimit(found, 1);
  ASSERT_THAT(refuse, ::testing::SizeIs(1));
  EXPECT_EQ(found[refuse[0]].client, Ip("127.0.0.3"));
  EXPECT_THAT(ServerConnections({port + 1 == 65536 ? 1 : port + 1}), IsEmpty());
  for (int fd : clients) close(fd);
  for (int fd : accepted) close(fd);
  close(listener);
}

}  // namespace
}  // namespace pathwise::exporters

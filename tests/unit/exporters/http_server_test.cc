// SPDX-License-Identifier: Apache-2.0
// The HTTP endpoint over a real socket: routes, status codes, and a clear
// error when the port is taken.
#include "exporters/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "exporters/prometheus_families.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/synthetic.h"
#include "tests/unit/http_client.h"

namespace pathwise::exporters {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

using ::pathwise::testing::Request;

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    snapshot_ =
        std::make_shared<model::Snapshot>(model::MakeSyntheticSnapshot({}));
    store_.Publish(snapshot_);
    collectable_ = std::make_unique<SnapshotCollectable>(
        store_, BuildInfo{"1.2.3", "abc"});
    HttpRoutes routes;
    routes["/metrics"] = [this] {
      return HttpResponse{200, kTextContentType,
                          SerializeText(collectable_->Collect())};
    };
    routes["/healthz"] = [] { return HttpResponse{503, "text/plain", "no\n"}; };
    auto server = HttpServer::Start("127.0.0.1:0", std::move(routes));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    ASSERT_FALSE(server_->ListeningPorts().empty());
    port_ = server_->ListeningPorts()[0];
    ASSERT_GT(port_, 0);
  }

  model::SnapshotStore store_;
  std::shared_ptr<model::Snapshot> snapshot_;
  std::unique_ptr<SnapshotCollectable> collectable_;
  std::unique_ptr<HttpServer> server_;
  int port_ = 0;
};

TEST_F(HttpServerTest, ServesMetricsFromTheCurrentSnapshot) {
  std::string r = Request(port_, "GET", "/metrics");
  EXPECT_THAT(r, StartsWith("HTTP/1.1 200 OK"));
  EXPECT_THAT(r, HasSubstr("Content-Type: text/plain; version=0.0.4"));
  EXPECT_THAT(
      r,
      HasSubstr("pathwise_build_info{version=\"1.2.3\",revision=\"abc\"} 1"));
  EXPECT_THAT(r, HasSubstr("path=\"nvme0c1n1\""));

  // A new snapshot without that path: its series are gone on the next scrape.
  auto next = std::make_shared<model::Snapshot>(
      model::MakeSyntheticSnapshot({.controllers_per_subsystem = 1}));
  store_.Publish(next);
  r = Request(port_, "GET", "/metrics");
  EXPECT_THAT(r, ::testing::Not(HasSubstr("path=\"nvme0c1n1\"")));
}

TEST_F(HttpServerTest, StatusCodes) {
  EXPECT_THAT(Request(port_, "GET", "/healthz"),
              StartsWith("HTTP/1.1 503 Service Unavailable"));
  EXPECT_THAT(Request(port_, "GET", "/nope"), StartsWith("HTTP/1.1 404"));
  EXPECT_THAT(Request(port_, "GET", "/metrics/x"), StartsWith("HTTP/1.1 404"));
  const std::string post = Request(port_, "POST", "/metrics");
  EXPECT_THAT(post, StartsWith("HTTP/1.1 405"));
  EXPECT_THAT(post, HasSubstr("\r\nAllow: GET, HEAD\r\n"));
  std::string head = Request(port_, "HEAD", "/metrics");
  EXPECT_THAT(head, StartsWith("HTTP/1.1 200"));
  EXPECT_THAT(head, ::testing::Not(HasSubstr("pathwise_build_info")));
}

TEST_F(HttpServerTest, PortInUseIsReportedAsSuch) {
  auto second = HttpServer::Start(absl::StrCat("127.0.0.1:", port_), {});
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().message(),
            absl::StrCat("cannot listen on 127.0.0.1:", port_,
                         ": address already in use"));
}

// A socket connected to [addr]:port over IPv6 (or IPv4), -1 on failure.
int Connect6(const char* addr, int port, int family = AF_INET6) {
  const int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  sockaddr_storage ss{};
  socklen_t len = 0;
  if (family == AF_INET6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&ss);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET6, addr, &in6->sin6_addr);
    len = sizeof(*in6);
  } else {
    auto* in = reinterpret_cast<sockaddr_in*>(&ss);
    in->sin_family = AF_INET;
    in->sin_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET, addr, &in->sin_addr);
    len = sizeof(*in);
  }
  if (connect(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

std::string GetOver(int fd, const std::string& path) {
  if (fd < 0) return "connect failed";
  const std::string req =
      absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: x\r\n\r\n");
  send(fd, req.data(), req.size(), MSG_NOSIGNAL);
  std::string r = ::pathwise::testing::ReadResponse(fd);
  close(fd);
  return r;
}

bool HostHasIpv6Loopback() {
  const int fd = socket(AF_INET6, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_addr = in6addr_loopback;
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
  close(fd);
  return ok;
}

HttpRoutes Healthz() {
  HttpRoutes routes;
  routes["/healthz"] = [] { return HttpResponse{200, "text/plain", "ok\n"}; };
  return routes;
}

// [::1] serves IPv6 only; [::] serves IPv6 and, dual-stack, IPv4; an
// IPv4 address serves IPv4 only. The test machine must have IPv6 on
// loopback (the kernel's default): without it the test fails, loudly.
TEST(HttpServerIpv6, LoopbackAndDualStack) {
  ASSERT_TRUE(HostHasIpv6Loopback())
      << "this host has no IPv6 loopback (ipv6.disable=1?)";
  auto v6 = HttpServer::Start("[::1]:0", Healthz());
  ASSERT_TRUE(v6.ok()) << v6.status();
  const int p6 = (*v6)->ListeningPorts().at(0);
  EXPECT_THAT(GetOver(Connect6("::1", p6), "/healthz"),
              StartsWith("HTTP/1.1 200"));
  EXPECT_EQ(Connect6("127.0.0.1", p6, AF_INET), -1);

  auto dual = HttpServer::Start("[::]:0", Healthz());
  ASSERT_TRUE(dual.ok()) << dual.status();
  const int pd = (*dual)->ListeningPorts().at(0);
  EXPECT_THAT(GetOver(Connect6("::1", pd), "/healthz"),
              StartsWith("HTTP/1.1 200"));
  EXPECT_THAT(GetOver(Connect6("127.0.0.1", pd, AF_INET), "/healthz"),
              StartsWith("HTTP/1.1 200"));

  // ":PORT" is every interface, as [::] where the host has IPv6.
  auto any = HttpServer::Start(":0", Healthz());
  ASSERT_TRUE(any.ok()) << any.status();
  const int pa = (*any)->ListeningPorts().at(0);
  EXPECT_THAT(GetOver(Connect6("::1", pa), "/healthz"),
              StartsWith("HTTP/1.1 200"));
  EXPECT_THAT(GetOver(Connect6("127.0.0.1", pa, AF_INET), "/healthz"),
              StartsWith("HTTP/1.1 200"));

  auto v4 = HttpServer::Start("127.0.0.1:0", Healthz());
  ASSERT_TRUE(v4.ok()) << v4.status();
  EXPECT_EQ(Connect6("::1", (*v4)->ListeningPorts().at(0)), -1);
}

TEST(HttpServerIpv6, BadAddressesAreRefusedWithTheReason) {
  EXPECT_THAT(std::string(HttpServer::Start("::1:9877", {}).status().message()),
              HasSubstr("needs brackets"));
  EXPECT_THAT(
      std::string(HttpServer::Start("[::1]:99999", {}).status().message()),
      HasSubstr("bad port"));
}

// Keep-alive: several requests over one connection, each answered in
// turn (Prometheus scrapes over one kept connection).
TEST_F(HttpServerTest, KeepAliveServesManyRequestsOnOneConnection) {
  const int fd = ::pathwise::testing::Connect(port_);
  ASSERT_GE(fd, 0);
  for (int i = 0; i < 5; ++i) {
    const std::string req = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
    ASSERT_EQ(send(fd, req.data(), req.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(req.size()));
    const std::string r = ::pathwise::testing::ReadResponse(fd);
    EXPECT_THAT(r, StartsWith("HTTP/1.1 503")) << i;
    EXPECT_THAT(r, ::testing::Not(HasSubstr("Connection: close"))) << i;
  }
  // Pipelined: two requests in one segment, two answers in order.
  const std::string two =
      "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
      "GET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  send(fd, two.data(), two.size(), MSG_NOSIGNAL);
  // Both answers may come in one read: everything up to the end of the
  // stream, which Connection: close brings.
  std::string both;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) both.append(buf, n);
  EXPECT_EQ(n, 0) << "the connection was not closed after Connection: close";
  close(fd);
  EXPECT_THAT(both, StartsWith("HTTP/1.1 503"));
  const size_t second = both.find("HTTP/1.1 404");
  EXPECT_NE(second, std::string::npos) << both;
  EXPECT_EQ(both.find("HTTP/1.1", 1), second) << "not two answers in order";
}

// gzip when asked (Prometheus asks on every scrape), identity otherwise;
// the compressed body is the text, smaller.
TEST_F(HttpServerTest, GzipWhenTheClientAcceptsIt) {
  const std::string plain = ::pathwise::testing::RawRequest(
      port_, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_THAT(plain, ::testing::Not(HasSubstr("Content-Encoding")));
  EXPECT_THAT(plain, HasSubstr("Vary: Accept-Encoding"));
  const std::string gz = ::pathwise::testing::RawRequest(
      port_,
      "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n");
  EXPECT_THAT(gz, StartsWith("HTTP/1.1 200"));
  EXPECT_THAT(gz, HasSubstr("Content-Encoding: gzip"));
  const std::string body = ::pathwise::testing::Body(gz);
  ASSERT_GE(body.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(body[0]), 0x1f);  // gzip magic
  EXPECT_EQ(static_cast<unsigned char>(body[1]), 0x8b);
  EXPECT_LT(body.size() * 3, ::pathwise::testing::Body(plain).size());
  // Small answers go as they are.
  EXPECT_THAT(::pathwise::testing::RawRequest(
                  port_,
                  "GET /healthz HTTP/1.1\r\nHost: x\r\nAccept-Encoding: "
                  "gzip\r\n\r\n"),
              ::testing::Not(HasSubstr("Content-Encoding")));
}

TEST_F(HttpServerTest, ServerMetricsCountConnections) {
  for (int i = 0; i < 3; ++i) Request(port_, "GET", "/healthz");
  const HttpServerCounters& c = server_->counters();
  EXPECT_GE(c.accepted.load(), 3u);
  // The gauge follows a connection that is opened, then closed.
  auto wait_for = [&](auto pred) {
    for (int i = 0; i < 200 && !pred(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return pred();
  };
  ASSERT_TRUE(wait_for([&] { return c.open.load() == 0; }));
  const int fd = ::pathwise::testing::Connect(port_);
  ASSERT_GE(fd, 0);
  EXPECT_TRUE(wait_for([&] { return c.open.load() == 1; }));
  close(fd);
  EXPECT_TRUE(wait_for([&] { return c.open.load() == 0; }));
}

int OpenFds() {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
    (void)e;
    ++n;
  }
  return n;
}

// Stopping a server that clients are busy with: no abort inside the HTTP
// library (its event threads must not race the shutdown for the listening
// socket), no hang, and nothing left open. Each round stops the server at
// a different point of the clients' connect-request-close cycle.
TEST(HttpServerStop, WhileClientsConnectAndRequest) {
  const int fds_before = OpenFds();
  for (int round = 0; round < 150; ++round) {
    HttpRoutes routes;
    routes["/x"] = [] { return HttpResponse{200, "text/plain", "x\n"}; };
    auto server = HttpServer::Start("127.0.0.1:0", std::move(routes));
    ASSERT_TRUE(server.ok()) << server.status();
    const int port = (*server)->ListeningPorts()[0];
    std::atomic<bool> stop{false};
    std::atomic<int> answered{0};
    std::vector<std::thread> clients;
    for (int c = 0; c < 3; ++c) {
      clients.emplace_back([&] {
        while (!stop.load()) {
          const int fd = ::pathwise::testing::Connect(port, 2000);
          if (fd < 0) continue;
          const std::string req = "GET /x HTTP/1.1\r\nHost: x\r\n\r\n";
          send(fd, req.data(), req.size(), MSG_NOSIGNAL);
          const std::string r = ::pathwise::testing::ReadResponse(fd);
          if (r.rfind("HTTP/1.1 200", 0) == 0) answered.fetch_add(1);
          close(fd);
        }
      });
    }
    // Stop once the clients are in full swing, at a point that moves.
    const auto give_up =
        std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (answered.load() < 1 + round % 7 &&
           std::chrono::steady_clock::now() < give_up) {
      std::this_thread::yield();
    }
    const int before_stop = answered.load();
    server->reset();
    stop.store(true);
    for (std::thread& t : clients) t.join();
    ASSERT_GE(before_stop, 1 + round % 7) << "round " << round;
    // The port no longer listens.
    EXPECT_LT(::pathwise::testing::Connect(port, 2000), 0) << "round " << round;
  }
  EXPECT_EQ(OpenFds(), fds_before);
}

}  // namespace
}  // namespace pathwise::exporters

// SPDX-License-Identifier: Apache-2.0
// The HTTP server against hostile clients, over real loopback sockets:
// connections that send nothing, requests sent byte by byte, malformed
// requests, thousands of idle connections, and a short concurrent scrape
// load. Bounds are generous: a loaded 2-core machine must pass.
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "bench/scrape_load_client.h"
#include "exporters/http_routes.h"
#include "exporters/http_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/snapshot_store.h"
#include "model/synthetic.h"
#include "tests/unit/http_client.h"

namespace pathwise::exporters {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using Clock = std::chrono::steady_clock;

using ::pathwise::testing::Connect;

// Sends `raw`, returns the whole answer.
std::string Exchange(int port, const std::string& raw) {
  return ::pathwise::testing::RawRequest(port, raw);
}

std::string Get(int port, const std::string& path) {
  return Exchange(port,
                  absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: x\r\n\r\n"));
}

// A loopback socket to `port` from the source address `from` (any
// 127.0.0.0/8 address is local), with 5 s read and write timeouts; -1 on
// failure.
int ConnectFrom(int port, const char* from) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  sockaddr_in src{};
  src.sin_family = AF_INET;
  inet_pton(AF_INET, from, &src.sin_addr);
  sockaddr_in dst{};
  dst.sin_family = AF_INET;
  dst.sin_port = htons(static_cast<uint16_t>(port));
  dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof(src)) != 0 ||
      connect(fd, reinterpret_cast<sockaddr*>(&dst), sizeof(dst)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// GET `path` from the address `from`; the whole answer, or "" on failure.
std::string GetFrom(int port, const char* from, const std::string& path) {
  const int fd = ConnectFrom(port, from);
  if (fd < 0) return "";
  const std::string req =
      absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string out;
  if (send(fd, req.data(), req.size(), MSG_NOSIGNAL) ==
      static_cast<ssize_t>(req.size())) {
    out = ::pathwise::testing::ReadResponse(fd);
  }
  close(fd);
  return out;
}

// How long a GET /healthz (from the address `from`) takes to be answered
// 200, or a failure.
::testing::AssertionResult ServedWithin(int port, std::chrono::seconds bound,
                                        const char* from = "127.0.0.1") {
  const Clock::time_point t0 = Clock::now();
  const std::string r = GetFrom(port, from, "/healthz");
  const auto took = Clock::now() - t0;
  if (r.rfind("HTTP/1.1 200", 0) != 0) {
    return ::testing::AssertionFailure()
           << "after " << std::chrono::duration<double>(took).count()
           << " s: \"" << r.substr(0, 40) << "\"";
  }
  if (took > bound) {
    return ::testing::AssertionFailure()
           << "took " << std::chrono::duration<double>(took).count() << " s";
  }
  return ::testing::AssertionSuccess();
}

// A server with the agent's routes on the 256-path synthetic topology.
class Served {
 public:
  explicit Served(const HttpServerOptions& options) {
    store_.Publish(std::make_shared<model::Snapshot>(
        model::MakeSyntheticSnapshot({.subsystems = 4,
                                      .heads_per_subsystem = 16,
                                      .controllers_per_subsystem = 4})));
    model::Health healthy;
    healthy.ready = true;
    healthy.live = true;
    auto server = HttpServer::Start(
        "127.0.0.1:0",
        MakeAgentRoutes(store_, [healthy] { return healthy; }, {"1", "x"}),
        options);
    if (server.ok()) {
      server_ = std::move(*server);
      port_ = server_->ListeningPorts().at(0);
    } else {
      ADD_FAILURE() << server.status();
    }
  }
  int port() const { return port_; }

 private:
  model::SnapshotStore store_;
  std::unique_ptr<HttpServer> server_;
  int port_ = 0;
};

// The tests with the default sizing share one server.
class HttpHostileTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { served_ = new Served({}); }
  static void TearDownTestSuite() {
    delete served_;
    served_ = nullptr;
  }
  void SetUp() override {
    port_ = served_->port();
    ASSERT_GT(port_, 0);
  }

  static Served* served_;
  int port_ = 0;
};
Served* HttpHostileTest::served_ = nullptr;

// With the default sizing, 100 connections that send nothing and 16 that
// send a request one byte every 100 ms, all from 127.0.0.1: the address
// keeps at most max_connections_per_client of them (a new one pushes out
// its longest-waiting one), other clients are served at once, and the
// server cuts the stalled ones off at the request deadline (2 s) rather
// than waiting for them.
TEST_F(HttpHostileTest, IdleAndSlowClientsDoNotStopOthers) {
  std::vector<int> idle;
  for (int i = 0; i < 100; ++i) {
    const int fd = Connect(port_);
    ASSERT_GE(fd, 0);
    idle.push_back(fd);
  }
  const std::string slow_request =
      "GET /healthz HTTP/1.1\r\nHost: x\r\nUser-Agent: slow-sender\r\n\r\n";
  std::atomic<int> slow_cut_off{0};
  std::atomic<int> slow_completed{0};
  std::vector<std::thread> slow;
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < 16; ++i) {
    slow.emplace_back([&] {
      const int fd = Connect(port_);
      if (fd < 0) return;
      bool cut = false;
      for (char c : slow_request) {
        if (send(fd, &c, 1, MSG_NOSIGNAL) != 1) {
          cut = true;
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        // The server closing shows up as a readable EOF (or a reset).
        char b;
        if (recv(fd, &b, 1, MSG_DONTWAIT) == 0 ||
            (errno != EAGAIN && errno != EWOULDBLOCK)) {
          cut = true;
          break;
        }
        if (Clock::now() - start > std::chrono::seconds(4)) break;
      }
      (cut ? slow_cut_off : slow_completed)++;
      close(fd);
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  // From another address.
  for (int i = 0; i < 5; ++i) {
    EXPECT_TRUE(ServedWithin(port_, std::chrono::seconds(2), "127.0.0.2"))
        << "probe " << i;
  }
  const std::string metrics = GetFrom(port_, "127.0.0.2", "/metrics");
  EXPECT_THAT(metrics, StartsWith("HTTP/1.1 200"));
  EXPECT_THAT(metrics, HasSubstr("pathwise_build_info"));

  for (std::thread& t : slow) t.join();
  // ~60 bytes at 10/s would take 6 s; the server drops them at ~2 s.
  EXPECT_EQ(slow_cut_off.load(), 16);
  EXPECT_EQ(slow_completed.load(), 0);
  // And the idle ones were closed too (read sees EOF, not our 5 s
  // timeout).
  for (int fd : idle) {
    char buf[256];
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0) {
    }
    EXPECT_EQ(n, 0) << "an idle connection was not closed";
    close(fd);
  }
}

// Threads the process runs now.
int Threads() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
    closedir(d);
  }
  return n;
}

// An idle connection costs a descriptor, not a thread: 1000 of them, from
// 8 addresses within the limits, leave the server's threads as they were,
// are all held open, and another client is served at once.
TEST(HttpHostile, ThousandsOfIdleConnectionsCostNoThread) {
  rlimit files{};
  getrlimit(RLIMIT_NOFILE, &files);
  files.rlim_cur = files.rlim_max;
  setrlimit(RLIMIT_NOFILE, &files);
  ASSERT_GE(files.rlim_cur, 2200u) << "too few descriptors for the test";
  auto counters = std::make_shared<HttpServerCounters>();
  // A request deadline longer than the test: the connections stay.
  const Served served({.max_connections = 2000,
                       .max_connections_per_client = 200,
                       .request_timeout_ms = 60000,
                       .counters = counters});
  ASSERT_GT(served.port(), 0);
  const int threads_before = Threads();
  std::vector<int> idle;
  for (int i = 0; i < 1000; ++i) {
    const std::string from = absl::StrCat("127.0.0.", 10 + i % 8);
    const int fd = ConnectFrom(served.port(), from.c_str());
    ASSERT_GE(fd, 0) << i;
    idle.push_back(fd);
  }
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(10);
  while (counters->open.load() < 1000 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(counters->open.load(), 1000);
  EXPECT_EQ(Threads(), threads_before);
  EXPECT_TRUE(
      ServedWithin(served.port(), std::chrono::seconds(1), "127.0.0.2"));
  for (int fd : idle) close(fd);
}

// One client address (127.0.0.1) keeps 500 connections that send nothing
// open, reopening each as soon as the server closes it, and 20 that send a
// request a byte every 100 ms: with 32 workers and no per-client limit they
// held every worker of the former thread-per-connection server. Another
// address (127.0.0.2) is served as if nothing happened: /healthz and
// /metrics answer 200, each within 4 s (a bound for a loaded machine; 1 ms
// when quiet), the attacker keeps at most its 32, and every connection
// pushed out is counted.
TEST(HttpHostile, OneClientsStalledConnectionsDoNotStopAnother) {
  rlimit files{};
  getrlimit(RLIMIT_NOFILE, &files);
  if (files.rlim_cur < 2048) {
    files.rlim_cur = std::min<rlim_t>(2048, files.rlim_max);
    setrlimit(RLIMIT_NOFILE, &files);
  }
  ASSERT_GE(files.rlim_cur, 1024u) << "too few descriptors for the test";
  auto counters = std::make_shared<HttpServerCounters>();
  // A per-address limit below the attacker's 500, so that it is enforced.
  const HttpServerOptions limited{.max_connections_per_client = 32,
                                  .counters = counters};
  const Served served(limited);
  const int port = served.port();
  ASSERT_GT(port, 0);

  std::atomic<bool> stop{false};
  std::atomic<int> opened{0};
  // The idle attacker: 500 open sockets; each one the server closes is
  // read, closed and opened again.
  std::thread idle([&] {
    std::vector<pollfd> fds;
    for (int i = 0; i < 500; ++i) {
      const int fd = ConnectFrom(port, "127.0.0.1");
      if (fd >= 0) fds.push_back({fd, POLLIN, 0});
    }
    opened = static_cast<int>(fds.size());
    while (!stop.load()) {
      if (poll(fds.data(), fds.size(), 20) <= 0) continue;
      for (pollfd& p : fds) {
        if (p.revents == 0) continue;
        char buf[512];
        const ssize_t n = recv(p.fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (n > 0) continue;  // the end of the stream comes next
        close(p.fd);
        p.fd = ConnectFrom(port, "127.0.0.1");
        if (p.fd < 0) p.fd = -1;  // poll skips it
        p.revents = 0;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    for (const pollfd& p : fds) {
      if (p.fd >= 0) close(p.fd);
    }
  });
  // The slow attacker: 20 senders of a byte every 100 ms, reconnecting
  // when cut off.
  std::vector<std::thread> slow;
  for (int i = 0; i < 20; ++i) {
    slow.emplace_back([&] {
      const std::string req = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
      while (!stop.load()) {
        const int fd = ConnectFrom(port, "127.0.0.1");
        if (fd < 0) {
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
          continue;
        }
        for (size_t k = 0; k < req.size() && !stop.load(); ++k) {
          if (send(fd, &req[k], 1, MSG_NOSIGNAL) != 1) break;
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        close(fd);
      }
    });
  }
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(20);
  while (opened.load() < 500 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(opened.load(), 500);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));

  // Over about 4 s of the attack, the other address is served every time.
  for (int i = 0; i < 8; ++i) {
    for (const char* path : {"/healthz", "/metrics"}) {
      const Clock::time_point t0 = Clock::now();
      const std::string r = GetFrom(port, "127.0.0.2", path);
      const double took =
          std::chrono::duration<double>(Clock::now() - t0).count();
      EXPECT_THAT(r, StartsWith("HTTP/1.1 200")) << path << " round " << i;
      EXPECT_LT(took, 4.0) << path << " round " << i;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  stop = true;
  idle.join();
  for (std::thread& t : slow) t.join();

  // The attacker's connections beyond its 32 were pushed out and counted.
  EXPECT_GE(counters->Refused(RefuseReason::kClientLimit),
            static_cast<uint64_t>(500 - limited.max_connections_per_client));
}

// Malformed requests get a 4xx and the server keeps serving.
TEST_F(HttpHostileTest, MalformedRequestsGet4xx) {
  const std::string huge_header = absl::StrCat(
      "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: ", std::string(20000, 'a'),
      "\r\n\r\n");
  std::string junk;
  for (int i = 0; i < 512; ++i) junk += static_cast<char>((i * 131 + 7) & 0xff);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"unknown method", "BREW /metrics HTTP/1.1\r\nHost: x\r\n\r\n"},
      {"POST",
       "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"},
      {"PUT", "PUT /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"},
      {"OPTIONS", "OPTIONS /metrics HTTP/1.1\r\nHost: x\r\n\r\n"},
      {"huge header", huge_header},
      {"path without slash", "GET metrics HTTP/1.1\r\nHost: x\r\n\r\n"},
      {"unknown path",
       "GET /metrics/../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n"},
      {"NUL in path", "GET /metrics%00 HTTP/1.1\r\nHost: x\r\n\r\n"},
      {"encoded path", "GET /%2e%2e/%6d HTTP/1.1\r\nHost: x\r\n\r\n"},
      {"long path", absl::StrCat("GET /", std::string(8000, 'p'),
                                 " HTTP/1.1\r\nHost: x\r\n\r\n")},
      {"no version", "GET /metrics\r\n\r\n"},
      {"binary junk", junk + "\r\n\r\n"},
      {"header without colon", "GET /metrics HTTP/1.1\r\nHost x\r\n\r\n"},
  };
  for (const auto& [name, raw] : cases) {
    const std::string r = Exchange(port_, raw);
    EXPECT_THAT(r,
                ::testing::MatchesRegex("HTTP/1\\.[01] 4[0-9][0-9] (.|\r|\n)*"))
        << name << ": " << r.substr(0, 80);
  }
  // An unknown protocol version gets 505, the status made for it.
  EXPECT_THAT(Exchange(port_, "GET /metrics HTTP/9.9\r\nHost: x\r\n\r\n"),
              StartsWith("HTTP/1.1 505 "));
  EXPECT_TRUE(ServedWithin(port_, std::chrono::seconds(2)));
}

// A client that sends half a request and closes its side will send
// nothing more: the server lets the connection go within two sweeps
// (200 to 400 ms), not at the 2 s request deadline.
TEST_F(HttpHostileTest, AHalfClosedPartialRequestIsLetGoAtOnce) {
  const int fd = Connect(port_);
  ASSERT_GE(fd, 0);
  const std::string partial = "GET /metr";
  ASSERT_EQ(send(fd, partial.data(), partial.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(partial.size()));
  const Clock::time_point t0 = Clock::now();
  shutdown(fd, SHUT_WR);
  char b;
  const ssize_t n = read(fd, &b, 1);
  const double took = std::chrono::duration<double>(Clock::now() - t0).count();
  close(fd);
  EXPECT_EQ(n, 0);
  EXPECT_LT(took, 1.5) << "held until the request deadline";
}

TEST_F(HttpHostileTest, MethodNotAllowedSaysWhatIs) {
  const std::string r =
      Exchange(port_, "DELETE /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_THAT(r, StartsWith("HTTP/1.1 405 Method Not Allowed"));
  EXPECT_THAT(r, HasSubstr("\r\nAllow: GET, HEAD\r\n"));
  const std::string head =
      Exchange(port_, "HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_THAT(head, StartsWith("HTTP/1.1 200"));
  EXPECT_THAT(head, HasSubstr("Content-Length: "));
  EXPECT_EQ(head.substr(head.find("\r\n\r\n") + 4), "");
}

// The scrape load benchmark's client, briefly: concurrent scrapers of the
// 256-path /metrics never see a failed or truncated scrape.
TEST_F(HttpHostileTest, ConcurrentScrapesAllSucceed) {
  const bench::ScrapeLoadResult r =
      bench::RunScrapeLoad(port_, "/metrics", 8, std::chrono::seconds(1));
  EXPECT_EQ(r.failed, 0) << r.first_failure;
  EXPECT_GT(r.ok, 8);
  EXPECT_GT(r.body_bytes, 100000u);
}

}  // namespace
}  // namespace pathwise::exporters

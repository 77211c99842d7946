// SPDX-License-Identifier: Apache-2.0
// The HTTP server's pure parts: which connections ConnGuard admits, evicts
// and times out (on a fake clock), FairPool's turn-taking, gzip
// negotiation and compression, and the listen address syntax.
#include "exporters/conn_guard.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <atomic>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "exporters/fair_pool.h"
#include "exporters/http_gzip.h"
#include "exporters/listen_socket.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/gunzip.h"

namespace pathwise::exporters {
namespace {

using ::pathwise::testing::Gunzip;

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;

const absl::Time kT0 = absl::FromUnixSeconds(1000);

std::optional<uint64_t> NoBytes(int) { return 0; }
bool NotGone(int) { return false; }

TEST(ConnGuard, AClientAtItsLimitPushesOutItsLongestWaitingConnection) {
  ConnGuard g({.max_total = 100, .max_per_client = 3});
  for (int i = 1; i <= 3; ++i) {
    EXPECT_TRUE(g.Admit(i, "10.0.0.1", 100 + i, kT0 + absl::Seconds(i), NoBytes)
                    .admitted);
  }
  // Another address is not affected by 10.0.0.1's limit.
  EXPECT_THAT(g.Admit(9, "10.0.0.2", 109, kT0, NoBytes).evict, IsEmpty());
  // The fourth from 10.0.0.1 is admitted; the first (longest waiting) goes.
  ConnGuard::Admission a =
      g.Admit(4, "10.0.0.1", 104, kT0 + absl::Seconds(4), NoBytes);
  EXPECT_TRUE(a.admitted);
  EXPECT_THAT(a.evict, ElementsAre(Pair(1u, RefuseReason::kClientLimit)));
  EXPECT_EQ(g.open_from("10.0.0.1"), 3);
  EXPECT_EQ(g.open(), 4);
  // It is still known (its descriptor is shut by the caller) until closed.
  EXPECT_EQ(g.Handle(1), 101);
  g.Closed(1);
  EXPECT_EQ(g.Handle(1), -1);
  EXPECT_EQ(g.open(), 4);
}

TEST(ConnGuard, ConnectionsBeingAnsweredAreNeverEvicted) {
  ConnGuard g({.max_total = 100, .max_per_client = 2});
  g.Admit(1, "a", 1, kT0, NoBytes);
  g.Admit(2, "a", 2, kT0 + absl::Seconds(1), NoBytes);
  g.RequestStarted(1, kT0 + absl::Seconds(2));
  // 1 is older but answering: 2 goes.
  EXPECT_THAT(g.Admit(3, "a", 3, kT0 + absl::Seconds(3), NoBytes).evict,
              ElementsAre(Pair(2u, RefuseReason::kClientLimit)));
  g.RequestStarted(3, kT0 + absl::Seconds(3));
  // Every connection of "a" is answering: the new one is refused.
  ConnGuard::Admission a = g.Admit(4, "a", 4, kT0 + absl::Seconds(4), NoBytes);
  EXPECT_FALSE(a.admitted);
  EXPECT_EQ(a.reason, RefuseReason::kClientLimit);
  EXPECT_EQ(g.open_from("a"), 2);
}

TEST(ConnGuard, TheTotalLimitTakesFromTheAddressHoldingMost) {
  ConnGuard g({.max_total = 4, .max_per_client = 0});
  g.Admit(1, "scraper", 1, kT0, NoBytes);  // the oldest of all
  g.Admit(2, "flood", 2, kT0 + absl::Seconds(1), NoBytes);
  g.Admit(3, "flood", 3, kT0 + absl::Seconds(2), NoBytes);
  g.Admit(4, "flood", 4, kT0 + absl::Seconds(3), NoBytes);
  ConnGuard::Admission a =
      g.Admit(5, "other", 5, kT0 + absl::Seconds(4), NoBytes);
  EXPECT_TRUE(a.admitted);
  EXPECT_THAT(a.evict, ElementsAre(Pair(2u, RefuseReason::kTotalLimit)));
  EXPECT_EQ(g.open_from("scraper"), 1);
}

// A client that closed its side without a request in progress is let go
// at the second sweep that finds it gone, not at its deadline; one being
// answered is not.
TEST(ConnGuard, ClientsThatHaveGoneAreLetGo) {
  ConnGuard g({});
  g.Admit(1, "a", 1, kT0, NoBytes);  // sent half a request, then FIN
  g.Admit(2, "a", 2, kT0, NoBytes);  // FIN after a whole request
  g.RequestStarted(2, kT0);
  auto gone = [](int) { return true; };
  // Seen gone once: a whole request may still be on its way to the
  // handler. Twice: let go.
  EXPECT_THAT(g.Sweep(kT0 + absl::Milliseconds(200), NoBytes, gone), IsEmpty());
  EXPECT_THAT(g.Sweep(kT0 + absl::Milliseconds(400), NoBytes, gone),
              ElementsAre(Pair(1u, std::nullopt)));
  EXPECT_EQ(g.open(), 1);
  // Gone, then back (not gone) on the next sweep: the count starts over.
  g.Admit(3, "a", 3, kT0, NoBytes);
  bool is_gone = true;
  auto flapping = [&](int) { return is_gone; };
  EXPECT_THAT(g.Sweep(kT0 + absl::Milliseconds(600), NoBytes, flapping),
              IsEmpty());
  is_gone = false;
  EXPECT_THAT(g.Sweep(kT0 + absl::Milliseconds(800), NoBytes, flapping),
              IsEmpty());
  is_gone = true;
  EXPECT_THAT(g.Sweep(kT0 + absl::Milliseconds(1000), NoBytes, flapping),
              IsEmpty());
}

// Silent connections (nothing received) go before ones that have sent
// something, whatever their age: a scraper mid-handshake survives a flood
// of silent sockets from its own address.
TEST(ConnGuard, SilentConnectionsArePushedOutFirst) {
  ConnGuard g({.max_total = 100, .max_per_client = 3});
  std::map<int, uint64_t> bytes;  // by handle
  auto in = [&](int h) -> std::optional<uint64_t> { return bytes[h]; };
  g.Admit(1, "nat", 1, kT0, in);
  bytes[1] = 300;  // the scraper, oldest, has sent its ClientHello
  g.Admit(2, "nat", 2, kT0 + absl::Seconds(1), in);  // silent
  g.Admit(3, "nat", 3, kT0 + absl::Seconds(2), in);  // silent
  EXPECT_THAT(g.Admit(4, "nat", 4, kT0 + absl::Seconds(3), in).evict,
              ElementsAre(Pair(2u, RefuseReason::kClientLimit)));
  EXPECT_THAT(g.Admit(5, "nat", 5, kT0 + absl::Seconds(4), in).evict,
              ElementsAre(Pair(3u, RefuseReason::kClientLimit)));
  // Only ones that sent something are left: the longest waiting goes.
  bytes[4] = 1;
  bytes[5] = 1;
  EXPECT_THAT(g.Admit(6, "nat", 6, kT0 + absl::Seconds(5), in).evict,
              ElementsAre(Pair(1u, RefuseReason::kClientLimit)));
}

TEST(ConnGuard, DeadlinesOnAFakeClock) {
  ConnGuard g({.max_total = 100,
               .max_per_client = 0,
               .request_timeout = absl::Seconds(2),
               .write_timeout = absl::Seconds(10),
               .idle_timeout = absl::Seconds(120)});
  std::map<int, uint64_t> bytes;  // by handle
  auto in = [&](int h) -> std::optional<uint64_t> { return bytes[h]; };
  g.Admit(1, "a", 1, kT0, NoBytes);  // silent from accept
  g.Admit(2, "a", 2, kT0, NoBytes);  // answered, then kept alive and idle
  g.Admit(3, "a", 3, kT0,
          NoBytes);  // answered, then sends its next request slowly
  g.Admit(4, "a", 4, kT0, NoBytes);  // a slow reader of its answer
  for (int id : {2, 3}) {
    g.RequestStarted(id, kT0 + absl::Milliseconds(10));
    g.RequestDone(id, kT0 + absl::Milliseconds(20), 100);
    bytes[id] = 100;
  }
  g.RequestStarted(4, kT0 + absl::Milliseconds(10));
  EXPECT_THAT(g.Sweep(kT0 + absl::Seconds(1), in, NotGone), IsEmpty());
  bytes[3] = 101;  // one byte of the next request
  EXPECT_THAT(g.Sweep(kT0 + absl::Seconds(2), in, NotGone), IsEmpty());
  // The silent one is past the request deadline from accept.
  EXPECT_THAT(g.Sweep(kT0 + absl::Milliseconds(2100), in, NotGone),
              ElementsAre(Pair(1u, RefuseReason::kRequestTimeout)));
  // The slow sender, 2 s after its first byte was seen.
  EXPECT_THAT(g.Sweep(kT0 + absl::Milliseconds(4100), in, NotGone),
              ElementsAre(Pair(3u, RefuseReason::kRequestTimeout)));
  EXPECT_THAT(g.Sweep(kT0 + absl::Seconds(11), in, NotGone),
              ElementsAre(Pair(4u, RefuseReason::kWriteTimeout)));
  // The idle kept-alive one lasts the idle timeout, and is no refusal.
  EXPECT_THAT(g.Sweep(kT0 + absl::Seconds(100), in, NotGone), IsEmpty());
  EXPECT_THAT(g.Sweep(kT0 + absl::Seconds(121), in, NotGone),
              ElementsAre(Pair(2u, std::nullopt)));
  EXPECT_EQ(g.open(), 0);
  // Each is reported once.
  EXPECT_THAT(g.Sweep(kT0 + absl::Seconds(500), in, NotGone), IsEmpty());
}

TEST(ConnGuard, ANewConnectionMustSendItsFirstRequestInTime) {
  ConnGuard g({.request_timeout = absl::Seconds(2)});
  g.Admit(1, "a", 1, kT0, NoBytes);
  g.RequestStarted(1, kT0 + absl::Seconds(1));
  // Answering: the write deadline applies, not the request deadline.
  EXPECT_THAT(g.Sweep(kT0 + absl::Seconds(5), NoBytes, NotGone), IsEmpty());
}

TEST(ClientKey, Ipv4AsIsIpv6ByItsSlash64) {
  sockaddr_in v4{};
  v4.sin_family = AF_INET;
  inet_pton(AF_INET, "192.0.2.7", &v4.sin_addr);
  EXPECT_EQ(ClientKey(&v4, sizeof(v4)), "192.0.2.7");
  sockaddr_in6 v6{};
  v6.sin6_family = AF_INET6;
  inet_pton(AF_INET6, "2001:db8:1:2:aaaa:bbbb:cccc:dddd", &v6.sin6_addr);
  EXPECT_EQ(ClientKey(&v6, sizeof(v6)), "2001:db8:1:2::/64");
  inet_pton(AF_INET6, "2001:db8:1:2::1", &v6.sin6_addr);
  EXPECT_EQ(ClientKey(&v6, sizeof(v6)), "2001:db8:1:2::/64");
  inet_pton(AF_INET6, "::ffff:192.0.2.7", &v6.sin6_addr);
  EXPECT_EQ(ClientKey(&v6, sizeof(v6)), "192.0.2.7");
  EXPECT_EQ(ClientKey(nullptr, 0), "?");
}

// A client with a long backlog delays another by one job, not its backlog.
TEST(FairPool, ClientsTakeTurns) {
  FairPool pool(1);
  absl::Notification go;
  absl::Mutex mu;
  std::vector<std::string> order;
  // Holds the only thread until everything is queued.
  pool.Submit("blocker", [&] { go.WaitForNotification(); });
  for (int i = 0; i < 5; ++i) {
    pool.Submit("flood", [&] {
      absl::MutexLock l(&mu);
      order.push_back("flood");
    });
  }
  pool.Submit("scraper", [&] {
    absl::MutexLock l(&mu);
    order.push_back("scraper");
  });
  go.Notify();
  pool.Stop();
  ASSERT_EQ(order.size(), 6u);
  const auto at = std::find(order.begin(), order.end(), "scraper");
  EXPECT_LE(at - order.begin(), 1) << "the scraper waited for the flood";
  EXPECT_FALSE(pool.Submit("late", [] {}));
}

TEST(Gzip, RoundTripsAndShrinksExpositionText) {
  std::string text;
  for (int i = 0; i < 2000; ++i) {
    text += "pathwise_path_io_total{path=\"nvme0c" + std::to_string(i % 16) +
            "n1\",op=\"read\"} " + std::to_string(i * 7) + "\n";
  }
  const std::string gz = Gzip(text);
  EXPECT_EQ(Gunzip(gz), text);
  EXPECT_LT(gz.size() * 5, text.size());
  EXPECT_EQ(Gunzip(Gzip("")), "");
}

TEST(Gzip, AcceptEncodingNegotiation) {
  EXPECT_TRUE(AcceptsGzip("gzip"));
  EXPECT_TRUE(AcceptsGzip("gzip, deflate, br"));  // curl, browsers
  EXPECT_TRUE(AcceptsGzip("GZIP;q=0.5"));
  EXPECT_TRUE(AcceptsGzip("x-gzip"));
  EXPECT_TRUE(AcceptsGzip("*"));
  EXPECT_TRUE(AcceptsGzip("identity, *;q=0.1"));
  EXPECT_FALSE(AcceptsGzip(""));
  EXPECT_FALSE(AcceptsGzip("identity"));
  EXPECT_FALSE(AcceptsGzip("br"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0, *"));  // refused by name
  EXPECT_FALSE(AcceptsGzip("*;q=0"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=2"));  // malformed
  EXPECT_FALSE(AcceptsGzip("gzip;q=banana"));
  EXPECT_FALSE(AcceptsGzip(";;;,,,"));
}

TEST(ListenAddress, Syntax) {
  auto ok = [](const char* t) { return ParseListenAddress(t).ok(); };
  EXPECT_TRUE(ok(":9877"));
  EXPECT_TRUE(ok("127.0.0.1:9877"));
  EXPECT_TRUE(ok("[::1]:9877"));
  EXPECT_TRUE(ok("[::]:9877"));
  EXPECT_TRUE(ok("localhost:0"));
  EXPECT_EQ(ParseListenAddress("[::1]:9877")->host, "::1");
  EXPECT_TRUE(ParseListenAddress("[::]:1")->bracketed);
  EXPECT_THAT(std::string(ParseListenAddress("::1:9877").status().message()),
              HasSubstr("needs brackets"));
  EXPECT_THAT(std::string(ParseListenAddress("9877").status().message()),
              HasSubstr("want [host]:port"));
  EXPECT_THAT(std::string(ParseListenAddress(":99999").status().message()),
              HasSubstr("bad port"));
  EXPECT_FALSE(ok(":http"));
  EXPECT_FALSE(ok(":"));
  EXPECT_FALSE(ok("[::1:9877"));
  EXPECT_FALSE(ok("[zz::1]:9877"));
  EXPECT_FALSE(ok("999.1.1.1:9877"));
  EXPECT_FALSE(ok("bad_host:9877"));
}

TEST(ListenSocket, BindErrorsAreSaid) {
  absl::StatusOr<int> fd = OpenListenSocket("127.0.0.1:0", 16);
  ASSERT_TRUE(fd.ok()) << fd.status();
  const int port = LocalPort(*fd);
  ASSERT_GT(port, 0);
  const std::string again = "127.0.0.1:" + std::to_string(port);
  EXPECT_EQ(OpenListenSocket(again, 16).status().message(),
            "cannot listen on " + again + ": address already in use");
  EXPECT_THAT(
      std::string(OpenListenSocket("192.0.2.1:0", 16).status().message()),
      HasSubstr("cannot listen on 192.0.2.1:0: "));
}

}  // namespace
}  // namespace pathwise::exporters

// The HTTP endpoint over a real socket: routes, status codes, and a clear
// error when the port is taken.
#include "exporters/http_server.h"

#include <string>

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

TEST(CivetOptions, AreTheServerSizing) {
  const HttpServerOptions o{.num_threads = 7, .request_timeout_ms = 123};
  const auto opts = CivetOptions("127.0.0.1:1", o);
  auto value = [&](const std::string& name) {
    for (const auto& [n, v] : opts) {
      if (n == name) return v;
    }
    return std::string("<unset>");
  };
  EXPECT_EQ(value("listening_ports"), "127.0.0.1:1");
  EXPECT_EQ(value("num_threads"), "7");
  EXPECT_EQ(value("request_timeout_ms"), "123");
  EXPECT_EQ(value("enable_keep_alive"), "no");
}

TEST(ListenAddress, ConvertsToCivetwebSyntax) {
  EXPECT_EQ(*ToCivetListeningPorts(":9877"), "9877");
  EXPECT_EQ(*ToCivetListeningPorts("127.0.0.1:9877"), "127.0.0.1:9877");
  // civetweb here is built without IPv6: refused with the reason.
  EXPECT_THAT(ToCivetListeningPorts("[::1]:9877").status().message(),
              HasSubstr("IPv6 is not supported"));
  EXPECT_FALSE(ToCivetListeningPorts("[::]:9877").ok());
  EXPECT_FALSE(ToCivetListeningPorts("9877").ok());
  EXPECT_FALSE(ToCivetListeningPorts(":99999").ok());
  EXPECT_FALSE(ToCivetListeningPorts(":http").ok());
  EXPECT_FALSE(ToCivetListeningPorts("::1:9877").ok());
}

}  // namespace
}  // namespace pathwise::exporters

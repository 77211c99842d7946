// SPDX-License-Identifier: Apache-2.0
// The server's own error answers (requests it cannot parse) have a fixed
// status line with nothing of the request in it (tests/fuzz/fuzz_http once
// found the former civetweb server echoing the request's version token,
// CR/LF included, into its status line).
#include <memory>
#include <string>

#include "exporters/http_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/http_client.h"

namespace pathwise::exporters {
namespace {

using ::pathwise::testing::RawRequest;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

class HttpErrorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    HttpRoutes routes;
    routes["/metrics"] = [] { return HttpResponse{.body = "m\n"}; };
    auto server = HttpServer::Start("127.0.0.1:0", std::move(routes));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    port_ = server_->ListeningPorts().at(0);
  }
  std::unique_ptr<HttpServer> server_;
  int port_ = 0;
};

TEST_F(HttpErrorTest, BadVersionTokenIsNotEchoedIntoTheAnswer) {
  const std::string r =
      RawRequest(port_,
                 "GET /metrics HTTP/1.1\xff\xff\r\nX-Injected: yes\r\n\r\n"
                 "Host: x\r\n\r\n");
  EXPECT_THAT(r, StartsWith("HTTP/1.1 400 Bad Request\r\n"));
  EXPECT_THAT(r, Not(HasSubstr("\xff")));
  EXPECT_THAT(r, Not(HasSubstr("X-Injected")));
  EXPECT_THAT(r, HasSubstr("Connection: close\r\n"));
}

TEST_F(HttpErrorTest, UnsupportedVersionIs505WithAFixedStatusLine) {
  const std::string r = RawRequest(port_, "GET /metrics HTTP/2.0\r\n\r\n");
  EXPECT_THAT(r, StartsWith("HTTP/1.1 505 "));
}

TEST_F(HttpErrorTest, GoodRequestsAreServedAsBefore) {
  const std::string r =
      RawRequest(port_, "GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n");
  EXPECT_THAT(r, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(r, HasSubstr("\r\n\r\nm\n"));
}

}  // namespace
}  // namespace pathwise::exporters

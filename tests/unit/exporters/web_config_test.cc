// SPDX-License-Identifier: Apache-2.0
// --web.config.file: the parser's checks, the authenticator (header parsing,
// bcrypt, the cache) and basic auth on the real HTTP server. TLS itself is
// checked end to end with curl and prometheus (web_config_e2e.sh).
#include "exporters/web_config.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "exporters/basic_auth.h"
#include "exporters/http_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/http_client.h"

namespace pathwise::exporters {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// htpasswd -nbBC 4: cost 4 keeps the tests fast.
constexpr char kAliceHash[] =
    "$2y$04$jgnWOcxh7szA0Qn9atkstOhQtdkmFQiQAB6oIU.4xkqyhvwYGEQXi";  // s3cret
constexpr char kBobHash[] =
    "$2y$04$gpwgBVsEG7E/y/4SBJZiu.PHH8PueosMiVPq65vj4yQfjEk2xFmxG";  // hunter2

std::string Basic(const std::string& user_colon_password) {
  return absl::StrCat("Basic ", absl::Base64Escape(user_colon_password));
}

std::string Error(absl::string_view yaml) {
  absl::StatusOr<WebConfig> c = ParseWebConfig(yaml);
  EXPECT_FALSE(c.ok()) << yaml;
  return c.ok() ? "" : std::string(c.status().message());
}

TEST(ParseWebConfig, EmptyFileMeansPlainHttpWithoutAuth) {
  absl::StatusOr<WebConfig> c = ParseWebConfig("");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->tls.has_value());
  EXPECT_TRUE(c->basic_auth_users.empty());
}

TEST(ParseWebConfig, FullToolkitExample) {
  absl::StatusOr<WebConfig> c = ParseWebConfig(absl::StrCat(R"(
tls_server_config:
  cert_file: server.crt
  key_file: /etc/pathwise/server.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: ca.crt
  min_version: TLS12
  max_version: TLS13
  prefer_server_cipher_suites: true
  cipher_suites: []
http_server_config:
  http2: false
  headers:
    X-Frame-Options: deny
    Strict-Transport-Security: max-age=31536000
basic_auth_users:
  alice: ')",
                                                            kAliceHash, R"('
  bob: )",
                                                            kBobHash, "\n"));
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE(c->tls.has_value());
  EXPECT_EQ(c->tls->cert_file, "server.crt");
  EXPECT_EQ(c->tls->key_file, "/etc/pathwise/server.key");
  EXPECT_EQ(c->tls->client_ca_file, "ca.crt");
  EXPECT_EQ(c->tls->client_auth, ClientAuth::kRequireAndVerifyClientCert);
  EXPECT_EQ(c->tls->min_version, 12);
  EXPECT_EQ(c->tls->max_version, 13);
  EXPECT_EQ(c->headers.at("X-Frame-Options"), "deny");
  EXPECT_EQ(c->headers.size(), 2u);
  EXPECT_EQ(c->basic_auth_users.size(), 2u);
  EXPECT_EQ(c->basic_auth_users.at("bob"), kBobHash);
}

TEST(ParseWebConfig, ClientAuthTypes) {
  auto parse = [](const std::string& type) {
    return ParseWebConfig(absl::StrCat(
        "tls_server_config: {cert_file: c, key_file: k, client_ca_file: ca, "
        "client_auth_type: ",
        type, "}"));
  };
  const std::pair<const char*, ClientAuth> kTypes[] = {
      {"VerifyClientCertIfGiven", ClientAuth::kVerifyClientCertIfGiven},
      {"RequireAndVerifyClientCert", ClientAuth::kRequireAndVerifyClientCert},
  };
  for (const auto& [name, type] : kTypes) {
    ASSERT_TRUE(parse(name).ok()) << name;
    EXPECT_EQ(parse(name)->tls->client_auth, type);
  }
  // The types that verify nothing take no CA, as in the toolkit.
  auto parse_no_ca = [](const std::string& type) {
    return ParseWebConfig(absl::StrCat(
        "tls_server_config: {cert_file: c, key_file: k, client_auth_type: ",
        type, "}"));
  };
  EXPECT_EQ(parse_no_ca("RequestClientCert")->tls->client_auth,
            ClientAuth::kRequestClientCert);
  EXPECT_EQ(parse_no_ca("RequireAnyClientCert")->tls->client_auth,
            ClientAuth::kRequireAnyClientCert);
  EXPECT_THAT(parse("RequireAnyClientCert").status().message(),
              HasSubstr("does not verify client certificates"));
  EXPECT_THAT(parse("Whatever").status().message(),
              HasSubstr("unknown value \"Whatever\""));
}

TEST(ParseWebConfig, RejectsWhatItCannotHonour) {
  EXPECT_EQ(Error("a: [1\n"),
            "bad YAML at line 2, column 1: end of sequence flow not found");
  EXPECT_EQ(Error("nonsense: 1\n"), "nonsense: unknown key");
  EXPECT_EQ(Error("- a\n- b\n"), "web config: want a mapping");
  EXPECT_EQ(Error("tls_server_config: {cert_file: c, key_file: k, "
                  "certfile: x}"),
            "tls_server_config.certfile: unknown key");
  EXPECT_EQ(Error("tls_server_config: {key_file: k}"),
            "tls_server_config: cert_file is required");
  EXPECT_EQ(Error("tls_server_config: {cert_file: c}"),
            "tls_server_config: key_file is required");
  EXPECT_THAT(Error("tls_server_config: {cert_file: c, key_file: k, "
                    "client_auth_type: RequireAndVerifyClientCert}"),
              HasSubstr("client_ca_file is required"));
  EXPECT_THAT(
      Error("tls_server_config: {cert_file: c, key_file: k, client_ca_file: "
            "ca}"),
      HasSubstr("client_auth_type does not verify"));
  EXPECT_THAT(Error("tls_server_config: {cert: PEM, key_file: k}"),
              HasSubstr("inline PEM is not supported; use cert_file"));
  EXPECT_THAT(Error("tls_server_config: {cert_file: c, key_file: k, "
                    "client_allowed_sans: [a.example]}"),
              HasSubstr("not supported"));
  EXPECT_THAT(Error("tls_server_config: {cert_file: c, key_file: k, "
                    "min_version: TLS14}"),
              HasSubstr("unknown version \"TLS14\""));
  EXPECT_THAT(Error("tls_server_config: {cert_file: c, key_file: k, "
                    "min_version: TLS13, max_version: TLS12}"),
              HasSubstr("min_version is above max_version"));
  EXPECT_THAT(Error("http_server_config: {headers: {X-Powered-By: me}}"),
              HasSubstr("not settable"));
  EXPECT_THAT(
      Error("http_server_config: {headers: {X-Frame-Options: \"a\\nb\"}}"),
      HasSubstr("one line"));
  EXPECT_THAT(Error("rate_limit: {interval: 1s, burst: 1}"),
              HasSubstr("not supported"));
  EXPECT_THAT(Error("basic_auth_users: {}\nbasic_auth_users: {}\n"),
              HasSubstr("duplicate key \"basic_auth_users\""));
}

TEST(ParseWebConfig, RejectsHashesThatAreNotBcrypt) {
  EXPECT_THAT(Error("basic_auth_users: {alice: s3cret}"),
              HasSubstr("basic_auth_users.alice: not a bcrypt hash"));
  // MD5-crypt, as `htpasswd -nb` without -B writes.
  EXPECT_THAT(
      Error("basic_auth_users: {alice: '$apr1$x$abcdefghijklmnopqrstuv'}"),
      HasSubstr("not a bcrypt hash"));
  std::string cost99 = kAliceHash;
  cost99[4] = '9';
  cost99[5] = '9';
  EXPECT_THAT(Error(absl::StrCat("basic_auth_users: {alice: '", cost99, "'}")),
              HasSubstr("cost must be 04 to 31"));
  // Right shape, but a salt character outside bcrypt's alphabet.
  std::string bad_salt = kAliceHash;
  bad_salt[10] = '!';
  EXPECT_THAT(
      Error(absl::StrCat("basic_auth_users: {alice: '", bad_salt, "'}")),
      HasSubstr("rejected by libcrypt"));
  EXPECT_THAT(
      Error(absl::StrCat("basic_auth_users: {'a:b': '", kAliceHash, "'}")),
      HasSubstr("bad username"));
}

TEST(LoadWebConfig, NamesTheFileAndTheProblem) {
  EXPECT_EQ(LoadWebConfig("/nonexistent/web.yml").status().message(),
            "/nonexistent/web.yml: No such file or directory");
  char dir[] = "/tmp/web_config_test.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = absl::StrCat(dir, "/web.yml");
  std::ofstream(path) << "tls_server_config: {cert_file: c.pem, key_file: "
                         "k.pem}\n";
  // Relative paths are resolved against the config file's directory.
  EXPECT_EQ(LoadWebConfig(path).status().message(),
            absl::StrCat(path, ": tls_server_config.cert_file ", dir,
                         "/c.pem: No such file or directory"));
  std::ofstream(absl::StrCat(dir, "/c.pem")) << "not a certificate\n";
  std::ofstream(absl::StrCat(dir, "/k.pem")) << "not a key\n";
  EXPECT_THAT(LoadWebConfig(path).status().message(),
              HasSubstr("cert_file " + std::string(dir) +
                        "/c.pem: not a PEM certificate"));
  std::ofstream(path) << "bogus: true\n";
  EXPECT_EQ(LoadWebConfig(path).status().message(),
            absl::StrCat(path, ": bogus: unknown key"));
  std::ofstream(path) << absl::StrCat("basic_auth_users:\n  alice: '",
                                      kAliceHash, "'\n");
  absl::StatusOr<WebConfig> ok = LoadWebConfig(path);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->basic_auth_users.size(), 1u);
  std::system(absl::StrCat("rm -rf ", dir).c_str());
}

TEST(BasicAuthenticator, ChecksHeaderAndPassword) {
  BasicAuthenticator auth({{"alice", kAliceHash}, {"bob", kBobHash}});
  EXPECT_TRUE(auth.Check(Basic("alice:s3cret").c_str()));
  EXPECT_TRUE(auth.Check(Basic("bob:hunter2").c_str()));
  // The scheme is case-insensitive (RFC 7617).
  EXPECT_TRUE(auth.Check(
      absl::StrCat("basic ", absl::Base64Escape("bob:hunter2")).c_str()));
  EXPECT_FALSE(auth.Check(nullptr));
  EXPECT_FALSE(auth.Check(""));
  EXPECT_FALSE(auth.Check(Basic("alice:hunter2").c_str()));  // bob's
  EXPECT_FALSE(auth.Check(Basic("alice:s3cre").c_str()));
  EXPECT_FALSE(auth.Check(Basic("alice:s3cretX").c_str()));
  EXPECT_FALSE(auth.Check(Basic("carol:s3cret").c_str()));
  EXPECT_FALSE(auth.Check(Basic("alice").c_str()));  // no colon
  EXPECT_FALSE(auth.Check("Bearer abc"));
  EXPECT_FALSE(auth.Check("Basic !!!not-base64"));
  // crypt() would stop at the NUL and see "s3cret".
  EXPECT_FALSE(auth.Check(Basic(std::string("alice:s3cret\0x", 14)).c_str()));
}

TEST(BasicAuthenticator, CachesOnlyVerifiedPasswords) {
  BasicAuthenticator auth(
      std::map<std::string, std::string>{{"alice", kAliceHash}});
  EXPECT_TRUE(auth.Check(Basic("alice:s3cret").c_str()));
  EXPECT_EQ(auth.bcrypt_runs(), 1u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_TRUE(auth.Check(Basic("alice:s3cret").c_str()));
  }
  EXPECT_EQ(auth.bcrypt_runs(), 1u);  // served from the cache
  // A wrong password is never a cache hit, and never cached.
  EXPECT_FALSE(auth.Check(Basic("alice:wrong").c_str()));
  EXPECT_FALSE(auth.Check(Basic("alice:wrong").c_str()));
  EXPECT_EQ(auth.bcrypt_runs(), 3u);
  // An unknown user costs a bcrypt run too (no timing hint).
  EXPECT_FALSE(auth.Check(Basic("mallory:s3cret").c_str()));
  EXPECT_EQ(auth.bcrypt_runs(), 4u);
  EXPECT_TRUE(auth.Check(Basic("alice:s3cret").c_str()));
  EXPECT_EQ(auth.bcrypt_runs(), 4u);
}

TEST(HttpServerBasicAuth, EveryPathNeedsCredentials) {
  WebConfig web;
  web.basic_auth_users["alice"] = kAliceHash;
  HttpRoutes routes;
  routes["/metrics"] = [] { return HttpResponse{200, "text/plain", "m\n"}; };
  routes["/healthz"] = [] { return HttpResponse{200, "text/plain", "ok\n"}; };
  auto server =
      HttpServer::Start("127.0.0.1:0", std::move(routes), {.web = web});
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->ListeningPorts()[0];
  auto get = [port](const std::string& path, const std::string& auth) {
    return testing::RawRequest(
        port,
        absl::StrCat("GET ", path, " HTTP/1.0\r\nHost: x\r\n",
                     auth.empty() ? "" : "Authorization: " + auth + "\r\n",
                     "\r\n"));
  };
  for (const char* path : {"/metrics", "/healthz", "/nope"}) {
    const std::string r = get(path, "");
    EXPECT_THAT(r, StartsWith("HTTP/1.1 401 Unauthorized")) << path;
    EXPECT_THAT(r, HasSubstr("WWW-Authenticate: Basic realm=\"pathwise\""));
  }
  EXPECT_THAT(get("/metrics", Basic("alice:nope")), StartsWith("HTTP/1.1 401"));
  const std::string ok = get("/metrics", Basic("alice:s3cret"));
  EXPECT_THAT(ok, StartsWith("HTTP/1.1 200 OK"));
  EXPECT_EQ(testing::Body(ok), "m\n");
  EXPECT_THAT(get("/nope", Basic("alice:s3cret")), StartsWith("HTTP/1.1 404"));
}

}  // namespace
}  // namespace pathwise::exporters

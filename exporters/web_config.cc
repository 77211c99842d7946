// SPDX-License-Identifier: Apache-2.0
#include "exporters/web_config.h"

#include <crypt.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/stat.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace pathwise::exporters {
namespace {

absl::Status Bad(absl::string_view where, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", what));
}

// Calls `each(key, value)` for every entry of the mapping `node` (named
// `where` in messages); a duplicate key or a key that is not a string is an
// error, as is a node that is neither a mapping nor empty.
absl::Status ForEachEntry(
    const YAML::Node& node, absl::string_view where,
    const std::function<absl::Status(const std::string&, const YAML::Node&)>&
        each) {
  if (node.IsNull()) return absl::OkStatus();
  if (!node.IsMap()) return Bad(where, "want a mapping");
  std::set<std::string> seen;
  for (const auto& kv : node) {
    if (!kv.first.IsScalar()) return Bad(where, "keys must be strings");
    const std::string key = kv.first.Scalar();
    if (!seen.insert(key).second) {
      return Bad(where, absl::StrCat("duplicate key \"", key, "\""));
    }
    if (absl::Status s = each(key, kv.second); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> Scalar(const YAML::Node& n,
                                   absl::string_view where) {
  if (!n.IsScalar()) return Bad(where, "want a string");
  return n.Scalar();
}

absl::Status Bool(const YAML::Node& n, absl::string_view where) {
  bool b = false;
  if (!n.IsScalar() || !YAML::convert<bool>::decode(n, b)) {
    return Bad(where, "want true or false");
  }
  return absl::OkStatus();
}

// A list the toolkit accepts but the server cannot apply: fine only empty.
absl::Status EmptyList(const YAML::Node& n, absl::string_view where,
                       absl::string_view why) {
  if (n.IsNull() || (n.IsSequence() && n.size() == 0)) {
    return absl::OkStatus();
  }
  return Bad(where, absl::StrCat("not supported: ", why));
}

absl::Status ParseClientAuth(const std::string& v, ClientAuth* out) {
  static const std::pair<const char*, ClientAuth> kTypes[] = {
      {"NoClientCert", ClientAuth::kNoClientCert},
      {"RequestClientCert", ClientAuth::kRequestClientCert},
      {"RequireAnyClientCert", ClientAuth::kRequireAnyClientCert},
      {"VerifyClientCertIfGiven", ClientAuth::kVerifyClientCertIfGiven},
      {"RequireAndVerifyClientCert", ClientAuth::kRequireAndVerifyClientCert},
  };
  for (const auto& [name, type] : kTypes) {
    if (v == name) {
      *out = type;
      return absl::OkStatus();
    }
  }
  return Bad("tls_server_config.client_auth_type",
             absl::StrCat("unknown value \"", v,
                          "\"; want NoClientCert, RequestClientCert, "
                          "RequireAnyClientCert, VerifyClientCertIfGiven or "
                          "RequireAndVerifyClientCert"));
}

// "TLS10".."TLS13" as 10..13.
absl::Status ParseVersion(const std::string& v, absl::string_view where,
                          int* out) {
  for (int n = 10; n <= 13; ++n) {
    if (v == absl::StrCat("TLS", n)) {
      *out = n;
      return absl::OkStatus();
    }
  }
  return Bad(where, absl::StrCat("unknown version \"", v,
                                 "\"; want TLS10, TLS11, TLS12 or TLS13"));
}

absl::Status ParseTlsKey(const std::string& key, const YAML::Node& v,
                         TlsServerConfig* tls) {
  const std::string where = absl::StrCat("tls_server_config.", key);
  auto str = [&](std::string* out) -> absl::Status {
    absl::StatusOr<std::string> s = Scalar(v, where);
    if (!s.ok()) return s.status();
    *out = *s;
    return absl::OkStatus();
  };
  std::string s;
  if (key == "cert_file") return str(&tls->cert_file);
  if (key == "key_file") return str(&tls->key_file);
  if (key == "client_ca_file") return str(&tls->client_ca_file);
  if (key == "client_auth_type") {
    if (absl::Status st = str(&s); !st.ok()) return st;
    return ParseClientAuth(s, &tls->client_auth);
  }
  if (key == "min_version" || key == "max_version") {
    if (absl::Status st = str(&s); !st.ok()) return st;
    return ParseVersion(
        s, where, key == "min_version" ? &tls->min_version : &tls->max_version);
  }
  if (key == "cert" || key == "key" || key == "client_ca") {
    return Bad(where,
               absl::StrCat("inline PEM is not supported; use ", key, "_file"));
  }
  if (key == "client_allowed_sans") {
    return EmptyList(v, where, "client certificate SAN matching");
  }
  if (key == "cipher_suites") {
    return EmptyList(v, where, "Go cipher suite names");
  }
  if (key == "curve_preferences") {
    return EmptyList(v, where, "curve selection");
  }
  // Go's crypto/tls ignores it too since Go 1.17.
  if (key == "prefer_server_cipher_suites") return Bool(v, where);
  return Bad(where, "unknown key");
}

absl::Status ParseTls(const YAML::Node& node, TlsServerConfig* tls) {
  if (absl::Status s =
          ForEachEntry(node, "tls_server_config",
                       [tls](const std::string& k, const YAML::Node& v) {
                         return ParseTlsKey(k, v, tls);
                       });
      !s.ok()) {
    return s;
  }
  if (tls->cert_file.empty()) {
    return Bad("tls_server_config", "cert_file is required");
  }
  if (tls->key_file.empty()) {
    return Bad("tls_server_config", "key_file is required");
  }
  if (tls->min_version > tls->max_version) {
    return Bad("tls_server_config", "min_version is above max_version");
  }
  const bool verifies =
      tls->client_auth == ClientAuth::kVerifyClientCertIfGiven ||
      tls->client_auth == ClientAuth::kRequireAndVerifyClientCert;
  if (verifies && tls->client_ca_file.empty()) {
    return Bad("tls_server_config",
               "client_ca_file is required by this client_auth_type");
  }
  if (!verifies && !tls->client_ca_file.empty()) {
    // As the toolkit: a CA that would verify nothing is a mistake.
    return Bad("tls_server_config",
               "client_ca_file is set but client_auth_type does not verify "
               "client certificates; set client_auth_type to "
               "RequireAndVerifyClientCert");
  }
  return absl::OkStatus();
}

// The headers the toolkit lets http_server_config.headers set.
bool SettableHeader(const std::string& name) {
  for (const char* h :
       {"Strict-Transport-Security", "X-Content-Type-Options",
        "X-Frame-Options", "X-XSS-Protection", "Content-Security-Policy"}) {
    if (name == h) return true;
  }
  return false;
}

absl::Status ParseHttpServerConfig(const YAML::Node& node,
                                   std::map<std::string, std::string>* out) {
  return ForEachEntry(
      node, "http_server_config",
      [out](const std::string& k, const YAML::Node& v) -> absl::Status {
        const std::string where = absl::StrCat("http_server_config.", k);
        // HTTP/2 is negotiated: clients fall back to HTTP/1.1, which is all
        // this server speaks, so either value serves.
        if (k == "http2") return Bool(v, where);
        if (k == "headers") {
          return ForEachEntry(
              v, where,
              [&](const std::string& name,
                  const YAML::Node& value) -> absl::Status {
                const std::string w = absl::StrCat(where, ".", name);
                if (!SettableHeader(name)) {
                  return Bad(w,
                             "not settable; want Strict-Transport-Security, "
                             "X-Content-Type-Options, X-Frame-Options, "
                             "X-XSS-Protection or Content-Security-Policy");
                }
                absl::StatusOr<std::string> s = Scalar(value, w);
                if (!s.ok()) return s.status();
                for (char c : *s) {
                  if (c == '\r' || c == '\n' || c == '\0') {
                    return Bad(w, "a header value must be one line");
                  }
                }
                (*out)[name] = *s;
                return absl::OkStatus();
              });
        }
        return Bad(where, "unknown key");
      });
}

// A bcrypt hash libcrypt can check: $2a$, $2b$ or $2y$, a two-digit cost,
// 53 characters of salt and hash.
absl::Status CheckBcrypt(const std::string& user, const std::string& hash) {
  const std::string where = absl::StrCat("basic_auth_users.", user);
  const bool shape = hash.size() == 60 && hash[0] == '$' && hash[1] == '2' &&
                     (hash[2] == 'a' || hash[2] == 'b' || hash[2] == 'y') &&
                     hash[3] == '$' && absl::ascii_isdigit(hash[4]) &&
                     absl::ascii_isdigit(hash[5]) && hash[6] == '$';
  if (!shape) {
    return Bad(where,
               "not a bcrypt hash (want $2y$, $2b$ or $2a$ and 60 "
               "characters, e.g. from htpasswd -nBC 10 USER)");
  }
  const int cost = (hash[4] - '0') * 10 + (hash[5] - '0');
  if (cost < 4 || cost > 31) {
    return Bad(where, "bcrypt cost must be 04 to 31");
  }
  // libcrypt parses the salt too; a malformed one fails here rather than
  // denying every login later. Cost 04 keeps this cheap.
  std::string probe = hash;
  probe[4] = '0';
  probe[5] = '4';
  crypt_data data;
  std::memset(&data, 0, sizeof(data));
  const char* out = crypt_rn("", probe.c_str(), &data, sizeof(data));
  if (out == nullptr || out[0] != '$') {
    return Bad(where, "bcrypt hash rejected by libcrypt (bad salt?)");
  }
  return absl::OkStatus();
}

absl::Status ParseUsers(const YAML::Node& node,
                        std::map<std::string, std::string>* users) {
  return ForEachEntry(
      node, "basic_auth_users",
      [users](const std::string& user, const YAML::Node& v) -> absl::Status {
        const std::string where = absl::StrCat("basic_auth_users.", user);
        if (user.empty() || absl::StrContains(user, ':')) {
          return Bad("basic_auth_users",
                     absl::StrCat("bad username \"", user,
                                  "\" (empty or containing ':')"));
        }
        absl::StatusOr<std::string> hash = Scalar(v, where);
        if (!hash.ok()) return hash.status();
        if (absl::Status s = CheckBcrypt(user, *hash); !s.ok()) return s;
        (*users)[user] = *hash;
        return absl::OkStatus();
      });
}

// "": a readable regular file; else what is wrong, with errno's words.
std::string Unreadable(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return std::strerror(errno);
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return std::strerror(errno);
  std::fclose(f);
  return "";
}

std::string OpenSslError() {
  const unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return "no PEM data";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof(buf));
  return buf;
}

// Loads certificate (chain) and key the way the server will (an OpenSSL
// SSL_CTX) and checks that they match, so a wrong file fails at start with
// its name rather than as a handshake error later. The server loads them
// with GnuTLS, which refuses what this lets through only for formats the
// toolkit's Go reader refuses too (the server's start says so).
absl::Status CheckCertAndKey(const TlsServerConfig& tls) {
  std::unique_ptr<SSL_CTX, void (*)(SSL_CTX*)> ctx(
      SSL_CTX_new(TLS_server_method()), &SSL_CTX_free);
  if (ctx == nullptr) {
    return absl::InternalError(
        absl::StrCat("OpenSSL: SSL_CTX_new: ", OpenSslError()));
  }
  if (SSL_CTX_use_certificate_chain_file(ctx.get(), tls.cert_file.c_str()) !=
      1) {
    return Bad(absl::StrCat("tls_server_config.cert_file ", tls.cert_file),
               absl::StrCat("not a PEM certificate: ", OpenSslError()));
  }
  if (SSL_CTX_use_PrivateKey_file(ctx.get(), tls.key_file.c_str(),
                                  SSL_FILETYPE_PEM) != 1) {
    const std::string why = OpenSslError();
    if (absl::StrContains(why, "key values mismatch")) {
      return Bad("tls_server_config",
                 absl::StrCat("key_file ", tls.key_file,
                              " does not match cert_file ", tls.cert_file));
    }
    return Bad(absl::StrCat("tls_server_config.key_file ", tls.key_file),
               absl::StrCat("not an unencrypted PEM private key: ", why));
  }
  if (SSL_CTX_check_private_key(ctx.get()) != 1) {
    ERR_clear_error();
    return Bad("tls_server_config",
               absl::StrCat("key_file ", tls.key_file,
                            " does not match cert_file ", tls.cert_file));
  }
  if (!tls.client_ca_file.empty() &&
      SSL_CTX_load_verify_locations(ctx.get(), tls.client_ca_file.c_str(),
                                    nullptr) != 1) {
    return Bad(
        absl::StrCat("tls_server_config.client_ca_file ", tls.client_ca_file),
        absl::StrCat("not PEM certificates: ", OpenSslError()));
  }
  return absl::OkStatus();
}

std::string Resolve(const std::string& dir, const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  return absl::StrCat(dir, "/", path);
}

}  // namespace

absl::StatusOr<WebConfig> ParseWebConfig(absl::string_view yaml) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad YAML at line ", e.mark.line + 1, ", column ",
                     e.mark.column + 1, ": ", e.msg));
  }
  WebConfig config;
  // yaml-cpp only throws on malformed input, which Load has already seen;
  // the guard keeps any later surprise from escaping as an exception.
  try {
    absl::Status s = ForEachEntry(
        root, "web config",
        [&config](const std::string& k, const YAML::Node& v) -> absl::Status {
          if (k == "tls_server_config") {
            config.tls.emplace();
            return ParseTls(v, &*config.tls);
          }
          if (k == "basic_auth_users") {
            return ParseUsers(v, &config.basic_auth_users);
          }
          if (k == "http_server_config") {
            return ParseHttpServerConfig(v, &config.headers);
          }
          if (k == "rate_limit") {
            return Bad(k, "not supported: rate limiting");
          }
          return Bad(k, "unknown key");
        });
    if (!s.ok()) return s;
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("bad YAML: ", e.msg));
  }
  return config;
}

absl::StatusOr<WebConfig> LoadWebConfig(const std::string& path) {
  if (std::string why = Unreadable(path); !why.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", why));
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<WebConfig> config = ParseWebConfig(text.str());
  if (!config.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", config.status().message()));
  }
  if (config->tls) {
    TlsServerConfig& tls = *config->tls;
    const size_t slash = path.rfind('/');
    const std::string dir =
        slash == std::string::npos ? "." : path.substr(0, slash);
    for (auto [field, name] :
         {std::pair{&tls.cert_file, "cert_file"},
          std::pair{&tls.key_file, "key_file"},
          std::pair{&tls.client_ca_file, "client_ca_file"}}) {
      if (field->empty()) continue;
      *field = Resolve(dir, *field);  // dir "" is the root: "/" + file
      if (std::string why = Unreadable(*field); !why.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            path, ": tls_server_config.", name, " ", *field, ": ", why));
      }
    }
    if (absl::Status s = CheckCertAndKey(tls); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": ", s.message()));
    }
  }
  return config;
}

}  // namespace pathwise::exporters

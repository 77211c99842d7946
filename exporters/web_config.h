// --web.config.file: TLS and basic authentication for the HTTP endpoint, in
// the YAML format of the Prometheus exporter toolkit (the file node_exporter
// takes), restricted to what civetweb can enforce. A key this file format
// defines but civetweb cannot honour is refused by name rather than ignored,
// so an operator never believes a protection is on when it is not.
#ifndef PATHWISE_EXPORTERS_WEB_CONFIG_H_
#define PATHWISE_EXPORTERS_WEB_CONFIG_H_

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace pathwise::exporters {

// The client_auth_type values civetweb can enforce (its ssl_verify_peer
// no / optional / yes, all verifying against client_ca_file).
enum class ClientAuth {
  kNoClientCert,
  kVerifyClientCertIfGiven,
  kRequireAndVerifyClientCert,
};

struct TlsServerConfig {
  std::string cert_file;
  std::string key_file;
  std::string client_ca_file;  // empty unless client_auth needs it
  ClientAuth client_auth = ClientAuth::kNoClientCert;
  // civetweb's ssl_protocol_version: 2 TLS 1.0+, 3 TLS 1.1+, 4 TLS 1.2+.
  // The toolkit's default min_version is TLS12.
  int civet_protocol_version = 4;
};

struct WebConfig {
  std::optional<TlsServerConfig> tls;
  // username -> bcrypt hash ($2a$, $2b$ or $2y$). Empty: no authentication.
  std::map<std::string, std::string> basic_auth_users;
};

// Parses and validates the YAML text: unknown keys, wrong types, keys
// civetweb cannot honour and hashes that are not bcrypt are errors. Does not
// touch the files named in it. The message is one line.
absl::StatusOr<WebConfig> ParseWebConfig(absl::string_view yaml);

// Reads `path`, parses it, and checks that the certificate, key and client
// CA files it names are readable regular files (relative paths are taken
// relative to the config file's directory, as the toolkit does). Messages
// name the file and the problem on one line.
absl::StatusOr<WebConfig> LoadWebConfig(const std::string& path);

// Checks Authorization headers against basic_auth_users. Thread-safe.
//
// bcrypt is deliberately slow (cost 10 is ~70 ms of CPU), which a scrape
// every few seconds should not pay each time: a verified username/password
// pair is remembered as a SHA-256 digest under a random per-process key, so
// the cache never holds a password or an unkeyed hash of one. Only
// successes are cached (a bounded number), so wrong guesses cannot grow it.
class BasicAuthenticator {
 public:
  explicit BasicAuthenticator(std::map<std::string, std::string> users);

  // True if `authorization` (the header's value; null if absent) is "Basic"
  // credentials of a configured user with the right password.
  bool Check(const char* authorization) const;

  // How many times bcrypt ran (tests check the cache with it).
  uint64_t bcrypt_runs() const;

 private:
  using Digest = std::array<unsigned char, 32>;
  bool Verify(const std::string& user, const std::string& password) const;
  Digest Key(const std::string& user, const std::string& password) const;

  std::map<std::string, std::string> users_;
  std::array<unsigned char, 32> cache_key_;
  mutable absl::Mutex mu_;
  mutable std::map<std::string, Digest> verified_ ABSL_GUARDED_BY(mu_);
  mutable uint64_t bcrypt_runs_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace pathwise::exporters

#endif  // PATHWISE_EXPORTERS_WEB_CONFIG_H_

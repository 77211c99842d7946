// --web.config.file: TLS and basic authentication for the HTTP endpoint, in
// the YAML format of the Prometheus exporter toolkit (the file node_exporter
// takes), restricted to what civetweb can enforce. A key this file format
// defines but civetweb cannot honour is refused by name rather than ignored,
// so an operator never believes a protection is on when it is not.
#ifndef PATHWISE_EXPORTERS_WEB_CONFIG_H_
#define PATHWISE_EXPORTERS_WEB_CONFIG_H_

#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

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

}  // namespace pathwise::exporters

#endif  // PATHWISE_EXPORTERS_WEB_CONFIG_H_

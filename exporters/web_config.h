// SPDX-License-Identifier: Apache-2.0
// --web.config.file: TLS and basic authentication for the HTTP endpoint, in
// the YAML format of the Prometheus exporter toolkit (the file node_exporter
// takes). A key this file format defines but the server cannot honour is
// refused by name rather than ignored, so an operator never believes a
// protection is on when it is not.
#ifndef PATHWISE_EXPORTERS_WEB_CONFIG_H_
#define PATHWISE_EXPORTERS_WEB_CONFIG_H_

#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace pathwise::exporters {

// client_auth_type, as Go's crypto/tls means them: whether a client
// certificate is asked for, required, and verified against client_ca_file.
// All are enforced in the TLS handshake.
enum class ClientAuth {
  kNoClientCert,
  kRequestClientCert,           // asked for, not required, not verified
  kRequireAnyClientCert,        // required, not verified
  kVerifyClientCertIfGiven,     // not required; verified when given
  kRequireAndVerifyClientCert,  // required and verified
};

struct TlsServerConfig {
  std::string cert_file;
  std::string key_file;
  std::string client_ca_file;  // empty unless client_auth needs it
  ClientAuth client_auth = ClientAuth::kNoClientCert;
  // TLS versions offered, as 10..13 for TLS 1.0..1.3; the toolkit's
  // defaults are TLS12 and TLS13.
  int min_version = 12;
  int max_version = 13;
};

struct WebConfig {
  std::optional<TlsServerConfig> tls;
  // username -> bcrypt hash ($2a$, $2b$ or $2y$). Empty: no authentication.
  std::map<std::string, std::string> basic_auth_users;
  // http_server_config.headers: added to every answer (the toolkit's five
  // security headers only), replacing a route's header of the same name.
  std::map<std::string, std::string> headers;
};

// Parses and validates the YAML text: unknown keys, wrong types, keys
// the server cannot honour and hashes that are not bcrypt are errors. Does not
// touch the files named in it. The message is one line.
absl::StatusOr<WebConfig> ParseWebConfig(absl::string_view yaml);

// Reads `path`, parses it, and checks that the certificate, key and client
// CA files it names are readable regular files (relative paths are taken
// relative to the config file's directory, as the toolkit does). Messages
// name the file and the problem on one line.
absl::StatusOr<WebConfig> LoadWebConfig(const std::string& path);

}  // namespace pathwise::exporters

#endif  // PATHWISE_EXPORTERS_WEB_CONFIG_H_

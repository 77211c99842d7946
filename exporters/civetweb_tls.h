// Makes Debian's civetweb 1.15 TLS work with OpenSSL 3.
//
// That civetweb loads OpenSSL at run time: dlopen("libssl.so") and
// dlopen("libcrypto.so") (the unversioned names, which only the -dev
// package installs), then dlsym() of each function it uses. One of them,
// SSL_get_peer_certificate, is a macro in OpenSSL 3 and no longer exported;
// civetweb keeps the NULL pointer and calls it on every TLS connection, so
// the first HTTPS request crashes the process (Debian's own `civetweb`
// binary does the same).
//
// The fix, without patching civetweb: two tiny shared libraries built with
// pathwise and embedded in it (exporters/tls_shim/), with sonames libssl.so
// and libcrypto.so, depending on libssl.so.3 and libcrypto.so.3; the one for
// libssl defines SSL_get_peer_certificate as SSL_get1_peer_certificate.
// Loaded from memory before civetweb starts TLS, they are what its
// dlopen() calls find (the dynamic loader matches an already-loaded
// library by soname), and dlsym() on them reaches every other function in
// the real libraries. The host then needs only the OpenSSL 3 runtime
// (libssl3), not libssl-dev.
#ifndef PATHWISE_EXPORTERS_CIVETWEB_TLS_H_
#define PATHWISE_EXPORTERS_CIVETWEB_TLS_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "exporters/web_config.h"

namespace pathwise::exporters {

// Loads the shims once per process (later calls return the first result).
// Must run before the first mg_start2() with a TLS port.
absl::Status PrepareCivetwebTls();

// civetweb's TLS options for `tls`, appended to `options` (the strings
// must outlive mg_start2). `pem` holds certificate and key.
void AppendTlsOptions(
    const TlsServerConfig& tls, const std::string& pem,
    std::vector<std::pair<std::string, std::string>>& options);

// civetweb reads certificate (chain) and key from one PEM file
// (ssl_certificate); the toolkit format has two. They are joined in an
// anonymous memory file, so the key is never written to disk; civetweb
// opens it as /proc/self/fd/N during mg_start2, after which it is closed.
absl::StatusOr<int> CombinedPem(const TlsServerConfig& tls);

}  // namespace pathwise::exporters

#endif  // PATHWISE_EXPORTERS_CIVETWEB_TLS_H_

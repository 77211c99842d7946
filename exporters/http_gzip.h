// SPDX-License-Identifier: Apache-2.0
// gzip for the HTTP server's answers: whether a request's Accept-Encoding
// takes it, and the compression itself (zlib). Prometheus asks for gzip on
// every scrape; /metrics text for 256 paths shrinks about tenfold.
#ifndef PATHWISE_EXPORTERS_HTTP_GZIP_H_
#define PATHWISE_EXPORTERS_HTTP_GZIP_H_

#include <string>

#include "absl/strings/string_view.h"

namespace pathwise::exporters {

// True if the Accept-Encoding value names gzip (or x-gzip, or *) with a
// q-value above 0 and does not refuse gzip by name ("gzip;q=0"). Tokens
// are case-insensitive (RFC 9110 12.5.3); anything malformed counts as not
// accepting.
bool AcceptsGzip(absl::string_view accept_encoding);

// `body` as a gzip member (RFC 1952), at zlib's fastest level: scrapes are
// frequent and the text compresses well even so.
std::string Gzip(absl::string_view body);

}  // namespace pathwise::exporters

#endif  // PATHWISE_EXPORTERS_HTTP_GZIP_H_

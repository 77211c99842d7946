// SPDX-License-Identifier: Apache-2.0
#include "exporters/http_gzip.h"

#include <zlib.h>

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace pathwise::exporters {
namespace {

// The q-value of one Accept-Encoding element's parameters (1 if none), or
// -1 if malformed.
double QValue(const std::vector<absl::string_view>& params) {
  double q = 1;
  for (size_t i = 1; i < params.size(); ++i) {
    absl::string_view p = absl::StripAsciiWhitespace(params[i]);
    if (p.size() < 2 || absl::ascii_tolower(p[0]) != 'q' || p[1] != '=') {
      continue;  // another parameter: ignored
    }
    p.remove_prefix(2);
    if (p.empty() || p.size() > 5 || !absl::SimpleAtod(p, &q) || q < 0 ||
        q > 1) {
      return -1;
    }
  }
  return q;
}

}  // namespace

bool AcceptsGzip(absl::string_view accept_encoding) {
  double gzip = -1;
  double star = -1;
  for (absl::string_view element : absl::StrSplit(accept_encoding, ',')) {
    const std::vector<absl::string_view> params = absl::StrSplit(element, ';');
    const std::string coding =
        absl::AsciiStrToLower(absl::StripAsciiWhitespace(params[0]));
    if (coding.empty()) continue;
    const double q = QValue(params);
    if (q < 0) return false;
    if (coding == "gzip" || coding == "x-gzip") {
      gzip = std::max(gzip, q);
    } else if (coding == "*") {
      star = std::max(star, q);
    }
  }
  if (gzip >= 0) return gzip > 0;
  return star > 0;
}

std::string Gzip(absl::string_view body) {
  z_stream z{};
  // 15 window bits, +16: a gzip header and trailer instead of zlib's.
  if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK) {
    return "";
  }
  std::string out(deflateBound(&z, body.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(body.data()));
  z.avail_in = static_cast<uInt>(body.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return rc == Z_STREAM_END ? out : "";
}

}  // namespace pathwise::exporters

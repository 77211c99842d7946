// SPDX-License-Identifier: Apache-2.0
// Decompresses a gzip member for the HTTP tests (link ZLIB::ZLIB).
#ifndef PATHWISE_TESTS_UNIT_GUNZIP_H_
#define PATHWISE_TESTS_UNIT_GUNZIP_H_

#include <zlib.h>

#include <string>

namespace pathwise::testing {

// The body of the gzip member `gz` (at most 16 MiB), "<corrupt>" if it is
// not one.
inline std::string Gunzip(const std::string& gz) {
  z_stream z{};
  inflateInit2(&z, 15 + 16);
  std::string out(16 << 20, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  z.avail_in = static_cast<uInt>(gz.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = inflate(&z, Z_FINISH);
  out.resize(z.total_out);
  inflateEnd(&z);
  return rc == Z_STREAM_END ? out : "<corrupt>";
}

}  // namespace pathwise::testing

#endif  // PATHWISE_TESTS_UNIT_GUNZIP_H_

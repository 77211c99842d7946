// SPDX-License-Identifier: Apache-2.0
// Every string pathwise sends out (metric label values, JSON, text views)
// must be valid UTF-8: Prometheus rejects a whole exposition over one bad
// label value, and nlohmann::json refuses to serialize one. Strings from the
// kernel need not be: a controller's serial and model are copied from the
// device's Identify data byte for byte, and an error message may quote
// them. The exporters replace what is not UTF-8 on the way out.
#ifndef PATHWISE_EXPORTERS_UTF8_H_
#define PATHWISE_EXPORTERS_UTF8_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace pathwise::exporters {

// The replacement character U+FFFD, as UTF-8.
inline constexpr absl::string_view kReplacementCharacter = "\xEF\xBF\xBD";

// Whether `s` is well-formed UTF-8 (Unicode, Table 3-7: no overlong forms,
// no surrogates, nothing above U+10FFFF).
bool IsValidUtf8(absl::string_view s);

// Replaces each maximal ill-formed subsequence of `s` by U+FFFD (Unicode's
// recommended practice, as WHATWG's decoder and nlohmann::json's
// error_handler_t::replace do); returns how many it replaced (0: `s` is
// unchanged).
size_t ReplaceInvalidUtf8(std::string& s);

}  // namespace pathwise::exporters

#endif  // PATHWISE_EXPORTERS_UTF8_H_

// SPDX-License-Identifier: Apache-2.0
#include "exporters/utf8.h"

#include <cstdint>
#include <cstring>
#include <utility>

namespace pathwise::exporters {
namespace {

// The length of the well-formed sequence that starts at s[i], or minus the
// length of the maximal subpart of an ill-formed one (at least 1): the
// longest prefix of a well-formed sequence found there.
int SequenceAt(absl::string_view s, size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) return 1;
  int trail = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    trail = 1;
  } else if (b0 == 0xE0) {
    trail = 2;
    lo = 0xA0;  // no overlong forms
  } else if ((b0 >= 0xE1 && b0 <= 0xEC) || b0 == 0xEE || b0 == 0xEF) {
    trail = 2;
  } else if (b0 == 0xED) {
    trail = 2;
    hi = 0x9F;  // no surrogates
  } else if (b0 == 0xF0) {
    trail = 3;
    lo = 0x90;  // no overlong forms
  } else if (b0 >= 0xF1 && b0 <= 0xF3) {
    trail = 3;
  } else if (b0 == 0xF4) {
    trail = 3;
    hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return -1;  // 0x80..0xC1, 0xF5..0xFF never start a sequence
  }
  for (int k = 1; k <= trail; ++k) {
    if (i + k >= s.size()) return -k;
    const auto b = static_cast<unsigned char>(s[i + k]);
    if (b < lo || b > hi) return -k;
    lo = 0x80;
    hi = 0xBF;
  }
  return trail + 1;
}

}  // namespace

bool IsValidUtf8(absl::string_view s) {
  for (size_t i = 0; i < s.size();) {
    // Plain ASCII eight bytes at a time: every scrape checks every label
    // value, and nearly all are ASCII names.
    if (uint64_t w; i + 8 <= s.size()) {
      std::memcpy(&w, s.data() + i, 8);
      if ((w & 0x8080808080808080u) == 0) {
        i += 8;
        continue;
      }
    }
    const int n = SequenceAt(s, i);
    if (n < 0) return false;
    i += static_cast<size_t>(n);
  }
  return true;
}

size_t ReplaceInvalidUtf8(std::string& s) {
  if (IsValidUtf8(s)) return 0;  // the common case: no copy
  std::string out;
  out.reserve(s.size() + 8);
  size_t replaced = 0;
  for (size_t i = 0; i < s.size();) {
    const int n = SequenceAt(s, i);
    if (n > 0) {
      out.append(s, i, static_cast<size_t>(n));
      i += static_cast<size_t>(n);
    } else {
      out.append(kReplacementCharacter.data(), kReplacementCharacter.size());
      ++replaced;
      i += static_cast<size_t>(-n);
    }
  }
  s = std::move(out);
  return replaced;
}

}  // namespace pathwise::exporters

// SPDX-License-Identifier: Apache-2.0
#include "lab/units.h"

#include <cmath>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace pathwise::lab {
namespace {

// Splits "123.5ms" into 123.5 and "ms".
bool SplitNumber(absl::string_view s, double* value, absl::string_view* unit) {
  s = absl::StripAsciiWhitespace(s);
  size_t i = 0;
  while (i < s.size() && (absl::ascii_isdigit(s[i]) || s[i] == '.' ||
                          (i == 0 && (s[i] == '+' || s[i] == '-')))) {
    ++i;
  }
  if (i == 0) return false;
  if (!absl::SimpleAtod(s.substr(0, i), value)) return false;
  if (!std::isfinite(*value)) return false;
  *unit = absl::StripAsciiWhitespace(s.substr(i));
  return true;
}

}  // namespace

absl::StatusOr<int64_t> ParseInt(absl::string_view s, int64_t lo, int64_t hi) {
  int64_t v;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(s), &v) || v < lo ||
      v > hi) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad integer '", s, "' (want ", lo, "..", hi, ")"));
  }
  return v;
}

absl::Status BadValue(absl::string_view what, absl::string_view value) {
  return absl::InvalidArgumentError(
      absl::StrCat("bad ", what, " '", value, "'"));
}

absl::StatusOr<int64_t> ParseDuration(absl::string_view s) {
  double v;
  absl::string_view unit;
  if (!SplitNumber(s, &v, &unit) || v < 0) {
    return BadValue("duration (want e.g. 30ms, 100us, 1.5s)", s);
  }
  static const std::map<absl::string_view, double> kUnits = {
      {"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}};
  auto it = kUnits.find(unit);
  if (it == kUnits.end()) {
    return BadValue("duration unit (want ns, us, ms, s or m)", s);
  }
  const double ns = v * it->second;
  if (ns > 1e18) return BadValue("duration (too large)", s);
  return static_cast<int64_t>(std::llround(ns));
}

absl::StatusOr<uint64_t> ParseSize(absl::string_view s) {
  double v;
  absl::string_view unit;
  if (!SplitNumber(s, &v, &unit) || v <= 0) {
    return BadValue("size (want e.g. 4k, 4KiB, 4096)", s);
  }
  static const std::map<std::string, double> kUnits = {
      {"", 1},      {"b", 1},       {"k", 1024},      {"kib", 1024},
      {"kb", 1000}, {"m", 1048576}, {"mib", 1048576}, {"mb", 1e6}};
  auto it = kUnits.find(absl::AsciiStrToLower(unit));
  if (it == kUnits.end()) return BadValue("size unit", s);
  const double bytes = std::round(v * it->second);
  if (bytes < 1) return BadValue("size (rounds to 0 bytes)", s);
  if (bytes > 1e18) return BadValue("size (too large)", s);
  return static_cast<uint64_t>(bytes);
}

absl::StatusOr<double> ParseBandwidth(absl::string_view s) {
  double v;
  absl::string_view unit;
  if (!SplitNumber(s, &v, &unit) || v < 0) {
    return BadValue("bandwidth (want e.g. 117MiB/s, 1Gbit/s)", s);
  }
  static const std::map<std::string, double> kUnits = {
      {"b/s", 1},          {"kib/s", 1024},
      {"mib/s", 1048576},  {"gib/s", 1073741824},
      {"kb/s", 1e3},       {"mb/s", 1e6},
      {"gb/s", 1e9},       {"kbit/s", 1e3 / 8},
      {"mbit/s", 1e6 / 8}, {"gbit/s", 1e9 / 8}};
  auto it = kUnits.find(absl::AsciiStrToLower(unit));
  if (it == kUnits.end()) {
    return BadValue(
        "bandwidth unit (want B/s, KiB/s, MiB/s, GiB/s, MB/s, GB/s, "
        "Mbit/s or Gbit/s)",
        s);
  }
  return v * it->second;
}

absl::StatusOr<double> ParseFraction(absl::string_view s) {
  double v;
  absl::string_view unit;
  if (!SplitNumber(s, &v, &unit))
    return BadValue("fraction (want 5% or 0.05)", s);
  if (unit == "%") {
    v /= 100;
  } else if (!unit.empty()) {
    return BadValue("fraction (want 5% or 0.05)", s);
  }
  if (v < 0 || v > 1) return BadValue("fraction (want 0..1 or 0%..100%)", s);
  return v;
}

}  // namespace pathwise::lab

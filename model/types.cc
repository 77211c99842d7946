// SPDX-License-Identifier: Apache-2.0
#include "model/types.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace pathwise::model {
namespace {

// Consumes a non-empty run of decimal digits from the front of `s`.
bool ConsumeDigits(absl::string_view& s, absl::string_view* digits) {
  size_t n = 0;
  while (n < s.size() && absl::ascii_isdigit(static_cast<unsigned char>(s[n])))
    ++n;
  if (n == 0) return false;
  *digits = s.substr(0, n);
  s.remove_prefix(n);
  return true;
}

}  // namespace

std::string ToString(const DevId& dev) {
  return absl::StrCat(dev.major, ":", dev.minor);
}

std::optional<NvmePathName> ParseNvmePathName(absl::string_view name) {
  absl::string_view s = name;
  NvmePathName p;
  if (absl::ConsumePrefix(&s, "nvme") && ConsumeDigits(s, &p.subsystem) &&
      absl::ConsumePrefix(&s, "c") && ConsumeDigits(s, &p.controller) &&
      absl::ConsumePrefix(&s, "n") && ConsumeDigits(s, &p.ns) && s.empty()) {
    return p;
  }
  return std::nullopt;
}

int ControllerInstance(absl::string_view name) {
  absl::string_view s = name;
  absl::string_view digits;
  int instance = -1;
  if (absl::ConsumePrefix(&s, "nvme") && ConsumeDigits(s, &digits) &&
      s.empty() && absl::SimpleAtoi(digits, &instance)) {
    return instance;
  }
  return -1;
}

std::string HeadName(const NvmePathName& path) {
  return absl::StrCat("nvme", path.subsystem, "n", path.ns);
}

}  // namespace pathwise::model

// SPDX-License-Identifier: Apache-2.0
#include "ui/json_fields.h"

#include <cmath>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

namespace pathwise::ui::json_fields {

[[noreturn]] void Bad(const std::string& where, absl::string_view what) {
  throw FieldError(absl::StrCat(where, ": ", what));
}

const json& Field(const json& obj, const char* key, const std::string& where) {
  if (!obj.is_object()) Bad(where, "not an object");
  auto it = obj.find(key);
  if (it == obj.end()) Bad(absl::StrCat(where, ".", key), "missing");
  return *it;
}

std::string Str(const json& obj, const char* key, const std::string& where) {
  const json& v = Field(obj, key, where);
  if (!v.is_string()) Bad(absl::StrCat(where, ".", key), "not a string");
  return v.get<std::string>();
}

// A string field that older documents may not have: "" then.
std::string StrOr(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

uint64_t U64(const json& v, const std::string& where) {
  if (!v.is_number_unsigned() &&
      !(v.is_number_integer() && v.get<int64_t>() >= 0)) {
    Bad(where, "not a non-negative integer");
  }
  return v.get<uint64_t>();
}
uint64_t U64(const json& obj, const char* key, const std::string& where) {
  return U64(Field(obj, key, where), absl::StrCat(where, ".", key));
}

double Num(const json& obj, const char* key, const std::string& where) {
  const json& v = Field(obj, key, where);
  if (!v.is_number()) Bad(absl::StrCat(where, ".", key), "not a number");
  return v.get<double>();
}

std::optional<double> OptNum(const json& obj, const char* key,
                             const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  if (!it->is_number()) Bad(absl::StrCat(where, ".", key), "not a number");
  return it->get<double>();
}

std::optional<uint64_t> OptU64(const json& obj, const char* key,
                               const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  return U64(*it, absl::StrCat(where, ".", key));
}

int Int(const json& obj, const char* key, const std::string& where) {
  const json& v = Field(obj, key, where);
  if (!v.is_number_integer())
    Bad(absl::StrCat(where, ".", key), "not an integer");
  return v.get<int>();
}

bool Bool(const json& obj, const char* key, const std::string& where) {
  const json& v = Field(obj, key, where);
  if (!v.is_boolean()) Bad(absl::StrCat(where, ".", key), "not a boolean");
  return v.get<bool>();
}

uint64_t Nanos(double seconds) {
  return seconds > 0 ? static_cast<uint64_t>(std::llround(seconds * 1e9)) : 0;
}

// The enum whose label (exporters/labels.h) is `text`, among `all`.
std::optional<model::DevId> Dev(const json& obj, const std::string& where) {
  const json& v = Field(obj, "dev", where);
  if (v.is_null()) return std::nullopt;
  if (!v.is_string()) Bad(where + ".dev", "not a string");
  std::pair<std::string, std::string> mm =
      absl::StrSplit(v.get<std::string>(), absl::MaxSplits(':', 1));
  model::DevId d;
  if (!absl::SimpleAtoi(mm.first, &d.major) ||
      !absl::SimpleAtoi(mm.second, &d.minor)) {
    Bad(where + ".dev", "not MAJOR:MINOR");
  }
  return d;
}

const json* OptObject(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_object() ? &*it : nullptr;
}

const json& Array(const json& obj, const char* key, const std::string& where) {
  const json& v = Field(obj, key, where);
  if (!v.is_array()) Bad(absl::StrCat(where, ".", key), "not an array");
  return v;
}

}  // namespace pathwise::ui::json_fields

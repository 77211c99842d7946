// SPDX-License-Identifier: Apache-2.0
// Checked reads of a JSON document's fields for ui/snapshot_json.cc: each
// names the field (a path such as "subsystems[0].heads[1].nsid") when it is
// missing or of the wrong type, by throwing FieldError, which the parser
// catches once at its top (no exception leaves ui/). Internal to ui/.
#ifndef PATHWISE_UI_JSON_FIELDS_H_
#define PATHWISE_UI_JSON_FIELDS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "model/types.h"
#include "nlohmann/json.hpp"

namespace pathwise::ui::json_fields {

using nlohmann::json;

// A field that is missing or of the wrong type; caught once, at the top,
// and turned into the one InvalidArgument.
struct FieldError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void Bad(const std::string& where, absl::string_view what);

// obj[key], which must exist (obj must be an object).
const json& Field(const json& obj, const char* key, const std::string& where);
const json& Array(const json& obj, const char* key, const std::string& where);
// obj[key] when it is an object, else nullptr (older documents lack some).
const json* OptObject(const json& obj, const char* key);

std::string Str(const json& obj, const char* key, const std::string& where);
// A string field older documents may not have: "" then.
std::string StrOr(const json& obj, const char* key);
uint64_t U64(const json& v, const std::string& where);
uint64_t U64(const json& obj, const char* key, const std::string& where);
double Num(const json& obj, const char* key, const std::string& where);
int Int(const json& obj, const char* key, const std::string& where);
bool Bool(const json& obj, const char* key, const std::string& where);
// Missing or null: nullopt.
std::optional<double> OptNum(const json& obj, const char* key,
                             const std::string& where);
std::optional<uint64_t> OptU64(const json& obj, const char* key,
                               const std::string& where);
// obj["dev"]: "MAJOR:MINOR" or null.
std::optional<model::DevId> Dev(const json& obj, const std::string& where);

// Seconds as the documents write them, back to whole nanoseconds.
uint64_t Nanos(double seconds);

// The enum whose label (exporters/labels.h) is `text`, among `all`.
template <typename E, size_t N, typename LabelFn>
std::optional<E> FromLabel(absl::string_view text, const std::array<E, N>& all,
                           LabelFn label) {
  for (E e : all) {
    if (label(e) == text) return e;
  }
  return std::nullopt;
}

// obj[key] spelled as one of `all`'s labels.
template <typename E, size_t N, typename LabelFn>
E LabelOrBad(const json& obj, const char* key, const std::string& where,
             const std::array<E, N>& all, LabelFn label) {
  const std::string text = Str(obj, key, where);
  std::optional<E> e = FromLabel(text, all, label);
  if (!e) {
    Bad(absl::StrCat(where, ".", key),
        absl::StrCat("unknown value \"", text, "\""));
  }
  return *e;
}

}  // namespace pathwise::ui::json_fields

#endif  // PATHWISE_UI_JSON_FIELDS_H_

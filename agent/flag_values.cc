// SPDX-License-Identifier: Apache-2.0
#include "agent/flag_values.h"

#include <algorithm>
#include <string>

#include "absl/strings/numbers.h"

namespace pathwise::agent {

std::string ParseInt(absl::string_view text, int* v, int lo, int hi,
                     absl::string_view range) {
  if (!absl::SimpleAtoi(text, v)) return "want an integer";
  return *v >= lo && *v <= hi ? "" : std::string(range);
}

std::string ParseDouble(absl::string_view text, double* v) {
  return absl::SimpleAtod(text, v) ? "" : "want a number";
}

std::string ParseDurationFlag(absl::string_view text, absl::Duration* d) {
  return absl::ParseDuration(text, d)
             ? ""
             : "want a duration such as 1s, 500ms or 1m30s";
}

std::string ParseEnum(absl::string_view text, std::string* v,
                      std::initializer_list<absl::string_view> values,
                      absl::string_view want) {
  if (std::find(values.begin(), values.end(), text) == values.end()) {
    return std::string(want);
  }
  *v = std::string(text);
  return "";
}

std::string ParseBpfMode(absl::string_view text, BpfMode* mode) {
  if (text == "auto") {
    *mode = BpfMode::kAuto;
  } else if (text == "required") {
    *mode = BpfMode::kRequired;
  } else if (text == "off") {
    *mode = BpfMode::kOff;
  } else {
    return "want auto, required or off";
  }
  return "";
}

std::string NonEmpty(absl::string_view text, std::string* v) {
  *v = std::string(text);
  return text.empty() ? "must not be empty" : "";
}

void AddInterval(CLI::App& app, Options* o, const std::string& help) {
  AddValue<absl::Duration>(
      app, "interval", &o->interval,
      [](absl::string_view t, absl::Duration* d) {
        std::string p = ParseDurationFlag(t, d);
        return !p.empty() || *d > absl::ZeroDuration() ? p : "must be positive";
      },
      "DURATION", "1s", help);
}

void AddSysfsRoot(CLI::App& app, Options* o, const std::string& help) {
  AddValue<std::string>(app, "path.sysfs", &o->sysfs_root, NonEmpty, "DIR",
                        o->sysfs_root, help);
  AddAlias<std::string>(app, "sysfs_root", "path.sysfs", &o->sysfs_root,
                        NonEmpty, &o->deprecated_flags);
}

void AddLogFlags(CLI::App& app, Options* o) {
  ParseFn<std::string> level = [](absl::string_view t, std::string* v) {
    return ParseEnum(t, v, {"debug", "info", "warn", "error"},
                     "want debug, info, warn or error");
  };
  AddValue<std::string>(
      app, "log.level", &o->log_level, level, "LEVEL", o->log_level,
      "Log level: debug, info, warn or error. Logs go to stderr.");
  AddAlias<std::string>(app, "log_level", "log.level", &o->log_level, level,
                        &o->deprecated_flags);
  AddValue<std::string>(
      app, "log.format", &o->log_format,
      [](absl::string_view t, std::string* v) {
        return ParseEnum(t, v, {"logfmt", "json"}, "want logfmt or json");
      },
      "logfmt|json", o->log_format,
      "Log line format: logfmt (ts=... level=... msg=\"...\") or json (one "
      "object per line); ts is RFC 3339 in UTC.");
}

void AddFormat(CLI::App& app, Options* o, absl::string_view command,
               absl::string_view first, absl::string_view second) {
  const std::string want =
      absl::StrCat(command, " wants ", first, " or ", second);
  AddValue<std::string>(
      app, "format", &o->format,
      [=](absl::string_view t, std::string* v) {
        return ParseEnum(t, v, {first, second}, want);
      },
      absl::StrCat(first, "|", second), std::string(first),
      absl::StrCat("Output format: ", first, " or ", second, "."));
}

}  // namespace pathwise::agent

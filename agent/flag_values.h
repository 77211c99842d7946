// SPDX-License-Identifier: Apache-2.0
// The flag helpers every pathwise command's flags are built from: values
// are strings to CLI11 and parsed by pathwise, so that every bad value gets
// the same one-line message, `invalid value "TEXT" for --NAME: PROBLEM`.
#ifndef PATHWISE_AGENT_FLAG_VALUES_H_
#define PATHWISE_AGENT_FLAG_VALUES_H_

#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "agent/cli.h"
#include "cli/flag_alias.h"

namespace pathwise::agent {

// Parses a flag's text into `*value`; returns "" or what is wrong with the
// text ("must be positive"), which becomes
// `invalid value "TEXT" for --NAME: PROBLEM`.
template <typename T>
using ParseFn = std::function<std::string(absl::string_view text, T* value)>;

// Adds --NAME, which takes a value parsed by `parse` into `*out`. CLI11
// checks the text first (so a bad value is a usage error before anything is
// stored), then the option's callback stores it. Every option is a string to
// CLI11: the conversions are pathwise's, with pathwise's messages, which
// name the flag as `name` spells it.
template <typename T>
CLI::Option* AddValue(CLI::App& app, const std::string& name, T* out,
                      ParseFn<T> parse, const std::string& type,
                      const std::string& def, const std::string& help) {
  CLI::Validator check(
      [name, parse](std::string& text) {
        T value{};
        std::string problem = parse(text, &value);
        if (problem.empty()) return problem;
        return absl::StrCat("invalid value \"", text, "\" for --", name, ": ",
                            problem);
      },
      "");
  return app
      .add_option_function<std::string>(
          "--" + cli::FlagKey(name),
          [out, parse](const std::string& text) { parse(text, out); }, help)
      ->type_name(type)
      ->default_str(def)
      ->check(check);
}

// Adds --OLD as a deprecated alias of --NEW (cli::DeprecatedAlias), with
// the same parsing into `*out`. Added after --NEW, which wins when a
// command line has both.
template <typename T>
CLI::Option* AddAlias(CLI::App& app, const std::string& old_name,
                      const std::string& new_name, T* out, ParseFn<T> parse,
                      std::vector<std::string>* deprecated) {
  const CLI::Option* primary = app.get_option("--" + cli::FlagKey(new_name));
  return cli::DeprecatedAlias(
      AddValue<T>(
          app, old_name, out,
          [primary, parse](absl::string_view text, T* v) {
            // The check (a value of its own) always; the store only
            // without --NEW.
            T value{};
            std::string problem = parse(text, &value);
            if (problem.empty() && primary->count() == 0) *v = value;
            return problem;
          },
          "", "", ""),
      old_name, new_name, deprecated);
}

std::string ParseInt(absl::string_view text, int* v, int lo, int hi,
                     absl::string_view range);
std::string ParseDouble(absl::string_view text, double* v);
std::string ParseDurationFlag(absl::string_view text, absl::Duration* d);
// One of `values` (as spelled), else `want`.
std::string ParseEnum(absl::string_view text, std::string* v,
                      std::initializer_list<absl::string_view> values,
                      absl::string_view want);
std::string ParseBpfMode(absl::string_view text, BpfMode* mode);
std::string NonEmpty(absl::string_view text, std::string* v);

// --interval, --path.sysfs and --log.level/--log.format as serve and
// snapshot take them (with the former --sysfs_root and --log_level as
// deprecated aliases).
void AddInterval(CLI::App& app, Options* o,
                 const std::string& help =
                     "Collection period: the topology is rescanned and the "
                     "statistics re-read this often.");
void AddSysfsRoot(CLI::App& app, Options* o,
                  const std::string& help =
                      "Where sysfs is mounted. Anything but /sys is bound "
                      "over /sys in a private mount namespace so readers of "
                      "/sys itself see it too (needs CAP_SYS_ADMIN).");
void AddLogFlags(CLI::App& app, Options* o);
// --format of `command`: `first` is the default.
void AddFormat(CLI::App& app, Options* o, absl::string_view command,
               absl::string_view first, absl::string_view second);

}  // namespace pathwise::agent

#endif  // PATHWISE_AGENT_FLAG_VALUES_H_

// SPDX-License-Identifier: Apache-2.0
// Conventions every pathwise command's flags follow (agent/ and datapath/
// both build CLI11 apps): `-` and `_` are the same in flag names, and a
// renamed flag keeps its former name as a hidden, deprecated alias.
#ifndef PATHWISE_CLI_FLAG_ALIAS_H_
#define PATHWISE_CLI_FLAG_ALIAS_H_

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "CLI/CLI.hpp"

namespace pathwise::cli {

// A flag's name as CLI11 knows it: every `_` a `-`. The command line's
// flag names are rewritten the same way before parsing, so a flag answers
// to either spelling.
inline std::string FlagKey(std::string_view name) {
  std::string key(name);
  std::replace(key.begin(), key.end(), '_', '-');
  return key;
}

// The group of the aliases. Not CLI11's hidden group (""): CLI11 drops the
// names of hidden options from its errors. The help formatter leaves this
// group out (agent/cli.cc), as the flag reference does.
inline constexpr char kDeprecatedGroup[] = "Deprecated";

// An alias's description names both flags, "deprecated: --OLD,
// now --NEW": the usage errors suggest --NEW for a near-miss of --OLD, and
// the flag reference lists --OLD under --NEW.
inline constexpr std::string_view kAliasWas = "deprecated: --";
inline constexpr std::string_view kAliasNow = ", now --";

// Makes `alias`, an option added for the former name --OLD, a hidden
// spelling of --NEW: it parses as before, and its use notes "flag --OLD is
// deprecated, use --NEW" once in `*deprecated`, which the binary logs as a
// warning.
inline CLI::Option* DeprecatedAlias(CLI::Option* alias,
                                    const std::string& old_name,
                                    const std::string& new_name,
                                    std::vector<std::string>* deprecated) {
  std::string note = "flag --" + old_name + " is deprecated, use --" + new_name;
  return alias->group(kDeprecatedGroup)
      ->description(std::string(kAliasWas) + old_name + std::string(kAliasNow) +
                    new_name)
      ->each([deprecated, note](const std::string&) {
        if (std::find(deprecated->begin(), deprecated->end(), note) ==
            deprecated->end()) {
          deprecated->push_back(note);
        }
      });
}

// The two names of an alias (without dashes); empty for another option.
struct Alias {
  std::string old_name;
  std::string new_name;
};
inline std::optional<Alias> AliasOf(const CLI::Option& opt) {
  const std::string& d = opt.get_description();
  const size_t now = d.find(kAliasNow);
  if (opt.get_group() != kDeprecatedGroup || d.rfind(kAliasWas, 0) != 0 ||
      now == std::string::npos) {
    return std::nullopt;
  }
  return Alias{d.substr(kAliasWas.size(), now - kAliasWas.size()),
               d.substr(now + kAliasNow.size())};
}

}  // namespace pathwise::cli

#endif  // PATHWISE_CLI_FLAG_ALIAS_H_

// SPDX-License-Identifier: Apache-2.0
// The pathwise binary's CLI11 app, shared by the parser (agent/cli.cc) and
// the generated references (agent/cli_docs.cc), so that the help, the flag
// reference and the man page come from the same definitions. Internal to
// agent/.
#ifndef PATHWISE_AGENT_CLI_APP_H_
#define PATHWISE_AGENT_CLI_APP_H_

#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "agent/cli.h"

namespace pathwise::agent {

struct Commands {
  CLI::App* serve;
  CLI::App* snapshot;
  CLI::App* topology;
  CLI::App* queues;
  CLI::App* top;
  CLI::App* lab;
  CLI::App* datapath;
  CLI::App* help;
  CLI::App* version;
  CLI::Option* version_flag;
  // `pathwise help --markdown` / `--man` (hidden): the generated references.
  CLI::Option* help_markdown;
  CLI::Option* help_man;
};

// The whole command line, writing into `*o`.
Commands BuildApp(CLI::App& app, Options* o);

// The commands that have flags of their own, in help order.
std::vector<CLI::App*> FlagCommands(const Commands& c);

// The binary's description and the text after its commands, shared by
// `pathwise --help` and the man page.
inline constexpr char kSummary[] =
    "makes every path of Linux NVMe native multipath visible";
inline constexpr char kFlagNames[] =
    "Flag names follow the Prometheus exporters: a group where they have one "
    "(--web.*, --path.*, --log.*), words joined by '-'. '_' and '-' are the "
    "same in flag names (--probe"
    "_interval is --probe-interval). A renamed "
    "flag's former name still works and logs a deprecation warning.";

}  // namespace pathwise::agent

#endif  // PATHWISE_AGENT_CLI_APP_H_

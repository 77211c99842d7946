// SPDX-License-Identifier: Apache-2.0
// The flags of the agent's commands, each added to its command's CLI::App
// with the check that turns a bad value into
// `invalid value "TEXT" for --NAME: PROBLEM`. Internal to agent/cli.cc; a
// file of its own because the flags' help texts are most of it.
#ifndef PATHWISE_AGENT_CLI_FLAGS_H_
#define PATHWISE_AGENT_CLI_FLAGS_H_

#include "agent/cli.h"

namespace CLI {
class App;
}  // namespace CLI

namespace pathwise::agent {

// Each adds the command's flags in help order; parsing fills `*o`.
void AddServeFlags(CLI::App& app, Options* o);
void AddSnapshotFlags(CLI::App& app, Options* o);
void AddTopologyFlags(CLI::App& app, Options* o);
void AddTopFlags(CLI::App& app, Options* o);

}  // namespace pathwise::agent

#endif  // PATHWISE_AGENT_CLI_FLAGS_H_

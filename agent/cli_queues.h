// SPDX-License-Identifier: Apache-2.0
// The flags of `pathwise queues` and the --queues opt-in of serve and
// snapshot. Internal to agent/cli.cc, like agent/cli_flags.h.
#ifndef PATHWISE_AGENT_CLI_QUEUES_H_
#define PATHWISE_AGENT_CLI_QUEUES_H_

#include "agent/cli.h"

namespace CLI {
class App;
}  // namespace CLI

namespace pathwise::agent {

// queues: --format text|json, --plan, --path.sysfs, --bpf, --log.level.
void AddQueuesFlags(CLI::App& app, Options* o);

// serve, snapshot: --queues (per-queue and per-flow series).
void AddQueuesOptIn(CLI::App& app, Options* o);

}  // namespace pathwise::agent

#endif  // PATHWISE_AGENT_CLI_QUEUES_H_

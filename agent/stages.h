// SPDX-License-Identifier: Apache-2.0
// The agent's pipeline stages as the command line asks for them: topology,
// I/O (the eBPF sampler or the sysfs fallback, and the controller prober),
// scoring, and serve's actuators.
#ifndef PATHWISE_AGENT_STAGES_H_
#define PATHWISE_AGENT_STAGES_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "agent/cli.h"
#include "agent/pipeline.h"

namespace pathwise::agent {

// `message` with its newlines turned into spaces (one log line).
std::string OneLine(absl::string_view message);

// Sets up the pipeline's stages: topology, I/O (and probes), scoring.
absl::Status SetUpPipeline(const Options& o, Pipeline& pipeline);

// Adds serve's actuators (the iopolicy actuator, also when off, so that its
// mode is exported).
absl::Status AddActuators(const Options& o, Pipeline& pipeline);

}  // namespace pathwise::agent

#endif  // PATHWISE_AGENT_STAGES_H_

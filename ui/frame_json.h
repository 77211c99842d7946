// SPDX-License-Identifier: Apache-2.0
// `pathwise top --format=json`: one frame as a JSON document, for scripts.
// Rates in per-second units, latencies in seconds (null when unknown),
// counters as {"total", "interval"}; every table whatever the view, each
// filtered and sorted as asked.
#ifndef PATHWISE_UI_FRAME_JSON_H_
#define PATHWISE_UI_FRAME_JSON_H_

#include <string>

#include "nlohmann/json.hpp"
#include "ui/frame.h"

namespace pathwise::ui {

// {"generation", "collected_at", "interval_seconds", "io_source", "source",
//  "failed_collectors": [..], "subsystems": [{name, nqn, iopolicy,
//  iopolicy_recommended, reason, actuator_last_decision}],
//  "heads": [{subsystem, name, paths, read, write, paths_by_health,
//  latency_imbalance_ratio}], "paths": [{subsystem, head, name, controller,
//  transport, address, ana_state, controller_state, health, read, write,
//  inflight, latency_ewma_seconds {read, write}, weight {read, write},
//  failovers, errors}], "controllers": [...], "devices": [...]}
// where read/write are {iops, mib_per_second, p50_seconds, p99_seconds,
// mean_seconds}. From the userspace datapath's snapshot also "datapath":
// {device, policy, paths, usable_paths, requests, failed_requests,
// no_path_waits, no_path_timeouts} and, per path, "datapath": {state,
// selections, selection_share (0-1 of the interval's choices, or null)}.
nlohmann::json FrameToJson(const Frame& frame, const std::string& source);

}  // namespace pathwise::ui

#endif  // PATHWISE_UI_FRAME_JSON_H_

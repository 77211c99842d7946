// SPDX-License-Identifier: Apache-2.0
// JSON views of a snapshot: the topology tree (GET /api/v1/topology,
// `pathwise topology --format=json`) and the whole snapshot with I/O
// statistics, histograms, scoring and collector results
// (GET /api/v1/snapshot, `pathwise snapshot --format=json`).
#ifndef PATHWISE_EXPORTERS_TOPOLOGY_JSON_H_
#define PATHWISE_EXPORTERS_TOPOLOGY_JSON_H_

#include <string>

#include "model/topology.h"
#include "nlohmann/json.hpp"

namespace pathwise::exporters {

// {"subsystems":[{name,nqn,iopolicy,model,serial,
//    "heads":[{name,nsid,dev,"paths":[{name,dev,controller,ana_state,
//       numa_node,transport,address,controller_state}]}],
//    "controllers":[{name,transport,address,traddr,trsvcid,host_traddr,
//       host_iface,state,cntlid,numa_node,io_queues}]}]}
// Paths, heads and controllers also have "diag" where the kernel has diag/
// counters: a path {failovers, command_retries, command_errors}, a head
// {io_requeued_no_usable_path, io_failed_no_available_path}, a controller
// {command_errors, resets, reconnects}, each only when the kernel has it.
// With `scoring`, each path also has "health", "weight" ({read,write,other}),
// "score" and "latency_ewma_seconds" ({read,write,other}, null without a
// sample), and each subsystem "iopolicy_recommended" and
// "iopolicy_recommended_reason". With `actuator`, each subsystem the
// iopolicy actuator decided about has "actuator_last_decision": {from, to,
// result, reason, error, restore, at}.
nlohmann::json TopologyToJson(const model::Topology& topology,
                              const model::Scoring* scoring = nullptr,
                              const model::ActuatorReport* actuator = nullptr);

// TopologyToJson plus "generation", "collected_at", "io_source",
// "topology_changes_total", "collectors" (scoring as in TopologyToJson),
// "io" ({"paths":{..}, "heads":{..}, "devices":{..}} keyed by device name,
// per op: completed, bytes, time_seconds, and where the source has them
// errors and "latency_seconds": {upper_bounds_seconds, counts, count,
// sum_seconds} with non-cumulative counts, one more than the finite bounds,
// the last above every bound), "nvme" (by path: errors_by_class, retries,
// failovers), "sampler" ({dropped, programs} or null), "probes" (by
// controller: latency_seconds as above, failures by reason, unreachable;
// {} with probes off), "ana_logs" only where the prober read ANA log pages
// (by controller: change_count, groups [{id, state, nsids}], read_at, error),
// "scoring" ({paths, heads, iopolicy_recommended} or null) and, with
// --queues, "queues" (exporters/queues_view.h).
nlohmann::json SnapshotToJson(const model::Snapshot& snapshot);

// `j` as the JSON routes and commands print it: indented by `indent`
// (nlohmann dump()'s: -1 compact), then a
// newline. Strings that are not valid UTF-8 (sysfs strings and error
// messages quoting them, see exporters/utf8.h) come out with U+FFFD for each
// invalid sequence, where nlohmann::json's default would throw.
std::string JsonText(const nlohmann::json& j, int indent = 2);

}  // namespace pathwise::exporters

#endif  // PATHWISE_EXPORTERS_TOPOLOGY_JSON_H_

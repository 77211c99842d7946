// JSON views of a snapshot: the topology tree (GET /api/v1/topology,
// `pathwise topology --format=json`) and the whole snapshot with I/O
// statistics and collector results (`pathwise snapshot --format=json`).
#ifndef PATHWISE_EXPORTERS_TOPOLOGY_JSON_H_
#define PATHWISE_EXPORTERS_TOPOLOGY_JSON_H_

#include "model/topology.h"
#include "nlohmann/json.hpp"

namespace pathwise::exporters {

// {"subsystems":[{name,nqn,iopolicy,model,serial,
//    "heads":[{name,nsid,dev,"paths":[{name,dev,controller,ana_state,
//       numa_node,transport,address,controller_state}]}],
//    "controllers":[{name,transport,address,traddr,trsvcid,host_traddr,
//       host_iface,state,cntlid,numa_node,io_queues}]}]}
// With `scoring`, each path also has "health", "weight" ({read,write,other}),
// "score" and "latency_ewma_seconds" ({read,write,other}, null without a
// sample), and each subsystem "iopolicy_recommended" and
// "iopolicy_recommended_reason".
nlohmann::json TopologyToJson(const model::Topology& topology,
                              const model::Scoring* scoring = nullptr);

// TopologyToJson plus "generation", "collected_at", "io_source",
// "topology_changes_total", "collectors" (scoring as in TopologyToJson) and
// "io" ({"paths":{..}, "heads":{..}} keyed by device name, per op: completed,
// bytes, time_seconds).
nlohmann::json SnapshotToJson(const model::Snapshot& snapshot);

}  // namespace pathwise::exporters

#endif  // PATHWISE_EXPORTERS_TOPOLOGY_JSON_H_

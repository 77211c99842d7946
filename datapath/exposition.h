// SPDX-License-Identifier: Apache-2.0
// The datapath's Prometheus exposition: what `pathwise datapath` serves on
// --web.listen-address.
//
// The datapath's counters become a model::Snapshot, so the agent's family
// builders (exporters/prometheus_families.h) render whatever means the same
// in both cases under the same names and labels, and dashboards and alerts
// read a datapath node as they read a kernel-multipath one:
//   - the per-controller namespaces (nvme1n1) are the paths, under their
//     controller and subsystem as sysfs names them; the ublk device
//     (ublkb0) is their head, the device applications use;
//   - per path and op: completed I/Os, bytes, summed latency and the latency
//     histogram (pathwise_path_io_*, coarse, fine or native as the agent's),
//     the same I/Os summed per head (pathwise_head_io_*);
//   - NVMe status errors by class and failovers (pathwise_path_nvme_errors_
//     total, pathwise_path_failovers_total), the ANA state once known, the
//     controllers' info and state;
//   - with the pathwise policy, the scoring its selector keeps (the agent's
//     scoring library, fed with the datapath's own latencies once per
//     window): per path latency EWMA, weight, score, health and sample age,
//     per head the paths by health and the latency imbalance, under the
//     scoring families' names (pathwise_path_latency_ewma_seconds, ...).
// What only the datapath has gets pathwise_datapath_* names
// (DatapathFamilies): the device, selections per policy, I/Os in flight,
// the pathwise selector's base latency and cap, timeouts, probes,
// transport errors, path usability, the no-path wait.
#ifndef PATHWISE_DATAPATH_EXPOSITION_H_
#define PATHWISE_DATAPATH_EXPOSITION_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "datapath/namespaces.h"
#include "datapath/path_state.h"
#include "datapath/shared_selector.h"
#include "exporters/histogram_exposition.h"
#include "exporters/http_server.h"
#include "exporters/prometheus_families.h"
#include "model/topology.h"
#include "nlohmann/json.hpp"
#include "policy/policy.h"
#include "prometheus/metric_family.h"

namespace pathwise::datapath {

// One moment of a running datapath, everything the exposition shows.
struct DatapathView {
  std::string device;  // the ublk block device's name: ublkb0
  policy::Policy policy = policy::Policy::kPathwise;
  NamespaceGroup group;
  DatapathStats stats;
  std::vector<PathStatus> status;  // per path, in group.paths order
  SelectorView selector;           // the device's selector, paths in order
};

// The topology of `group` as the exposition labels it (pure): one
// subsystem, the device as its only head, one path per per-controller
// namespace, their controllers. `subsystems[i]` is path i's subsystem
// name (nvme-subsys0), `controllers[i]` its controller as sysfs shows it
// (name, transport, address, state, cntlid); see ReadControllers.
model::Topology DatapathTopology(
    const DatapathView& view, const std::vector<std::string>& subsystems,
    const std::vector<model::Controller>& controllers);

// The snapshot of `view` over `topology` (pure): path and head I/O per op,
// NVMe errors and failovers per path, ANA states the datapath knows and,
// once the pathwise selector has scored a window, its scoring, and the
// selector's decisions (Snapshot::datapath).
model::Snapshot DatapathSnapshot(const DatapathView& view,
                                 model::Topology topology);

// The "datapath" object of the datapath's /api/v1/snapshot (pure):
// {device, policy, requests, failed_requests, no_path_waits,
// no_path_timeouts, paths: [{name, selections, state (usable, failed,
// ana_unusable), probing, inflight}]}, counters cumulative.
nlohmann::json DatapathReportToJson(const model::DatapathReport& report);

// The pathwise_datapath_* families of `view` (pure); per-path families
// carry the path labels of `topology` (DatapathTopology's).
std::vector<prometheus::MetricFamily> DatapathFamilies(
    const DatapathView& view, const model::Topology& topology);

// Each path's subsystem name (the nvme-subsystem entry that holds its
// controller; "" when none does) and controller attributes, read from
// `sysfs_root`. Unreadable attributes are left empty; the first such is
// the error.
absl::Status ReadControllers(const std::string& sysfs_root,
                             const NamespaceGroup& g,
                             std::vector<std::string>* subsystems,
                             std::vector<model::Controller>* controllers);

// /metrics (text, or protobuf with native histograms as the agent
// negotiates it), /api/v1/snapshot (the snapshot /metrics is built from,
// as the agent's SnapshotToJson writes it, plus "datapath":
// DatapathReportToJson; what `pathwise top --url` reads), /healthz (503 while
// no path is usable), /livez (200 while it answers) and /. `view` is called per
// scrape (on the server's threads); `sysfs_root` is re-read for controller
// states.
exporters::HttpRoutes DatapathRoutes(
    std::function<DatapathView()> view, std::string sysfs_root,
    exporters::BuildInfo build, exporters::HistogramBuckets buckets,
    std::shared_ptr<const exporters::HttpServerCounters> http);

}  // namespace pathwise::datapath

#endif  // PATHWISE_DATAPATH_EXPOSITION_H_

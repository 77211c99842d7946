// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the Prometheus family groups (prometheus_*.cc): building
// a family, appending one series to it, and the label sets that several
// groups repeat. Internal to pathwise_exporters.
#ifndef PATHWISE_EXPORTERS_PROMETHEUS_INTERNAL_H_
#define PATHWISE_EXPORTERS_PROMETHEUS_INTERNAL_H_

#include <initializer_list>
#include <string>
#include <vector>

#include "exporters/histogram_exposition.h"
#include "exporters/prometheus_families.h"
#include "model/topology.h"
#include "prometheus/metric_family.h"

namespace pathwise::exporters::internal {

using Labels = std::vector<prometheus::ClientMetric::Label>;

prometheus::MetricFamily Family(std::string name, std::string help,
                                prometheus::MetricType type);

void AddGauge(prometheus::MetricFamily& f, Labels labels, double value);
void AddCounter(prometheus::MetricFamily& f, Labels labels, double value);
// A latency histogram with its sum (the I/O time counter of the same I/Os),
// in `buckets` (exporters/histogram_exposition.h); nothing when it holds no
// observation.
void AddHistogram(prometheus::MetricFamily& f, Labels labels,
                  const model::LatencyHistogram& h, double sum_seconds,
                  HistogramBuckets buckets);

// `base` followed by `more`.
Labels With(Labels base,
            std::initializer_list<prometheus::ClientMetric::Label> more);

// Appends `f` to `out` unless it has no series: a family with nothing to
// report is left out of the exposition.
void Push(std::vector<prometheus::MetricFamily>& out,
          prometheus::MetricFamily f);

// The label set that identifies a head in every per-head family: subsystem,
// head.
Labels HeadLabels(const model::Head& h);

// The label set that identifies a path in every per-path family:
// subsystem, head, path, controller (in that order).
Labels PathLabels(const model::Path& p);

// The family groups, in exposition order (BuildFamilies calls them so).
// Each appends its families to `out`.

// pathwise_build_info.
void AddBuildFamilies(const std::string& version, const std::string& revision,
                      std::vector<prometheus::MetricFamily>& out);
// The agent's own families: pathwise_collector_*, pathwise_sampler_info,
// pathwise_topology_changes_total.
void AddAgentFamilies(const model::Snapshot& snapshot,
                      std::vector<prometheus::MetricFamily>& out);
// Subsystems, heads, paths and controllers: the *_info families and the
// ANA and controller state sets.
void AddTopologyFamilies(const model::Topology& topo, MetricsProfile profile,
                         std::vector<prometheus::MetricFamily>& out);
// The I/O families of paths and heads (pathwise_{path,head}_io_*).
void AddPathHeadIoFamilies(const model::Snapshot& snapshot,
                           const ExpositionOptions& options,
                           std::vector<prometheus::MetricFamily>& out);
// The scoring families (pathwise_path_latency_ewma_seconds, ...).
void AddScoringFamilies(const model::Topology& topo,
                        const model::Scoring& scoring, MetricsProfile profile,
                        std::vector<prometheus::MetricFamily>& out);
// The per-path NVMe families of the eBPF sampler (status classes, retries,
// failovers).
void AddPathNvmeFamilies(const model::Snapshot& snapshot,
                         MetricsProfile profile,
                         std::vector<prometheus::MetricFamily>& out);
// The controller probes' families (pathwise_controller_probe_*).
void AddControllerProbeFamilies(const model::Snapshot& snapshot,
                                HistogramBuckets buckets,
                                std::vector<prometheus::MetricFamily>& out);
// The kernel's own diag/ counters of paths, heads and controllers
// (pathwise_{path,head,controller}_diag_*), where the kernel has them.
void AddKernelDiagFamilies(const model::Topology& topo,
                           std::vector<prometheus::MetricFamily>& out);
// The I/O families of other block devices (pathwise_device_io_*).
void AddDeviceIoFamilies(const model::Snapshot& snapshot,
                         const ExpositionOptions& options,
                         std::vector<prometheus::MetricFamily>& out);
// The eBPF sampler's own statistics (pathwise_bpf_*).
void AddSamplerFamilies(const model::Snapshot& snapshot,
                        std::vector<prometheus::MetricFamily>& out);
// The NVMe/TCP queue map's families (pathwise_queue_*, pathwise_flow_*),
// with --queues only.
void AddQueueFamilies(const model::QueueMap& m,
                      std::vector<prometheus::MetricFamily>& out);
// The actuators' families (pathwise_actuator_*).
void AddActuatorFamilies(const model::ActuatorReport& report,
                         std::vector<prometheus::MetricFamily>& out);
void AddHeadIostatsFamilies(const model::HeadIostatsReport& report,
                            std::vector<prometheus::MetricFamily>& out);

}  // namespace pathwise::exporters::internal

#endif  // PATHWISE_EXPORTERS_PROMETHEUS_INTERNAL_H_

// SPDX-License-Identifier: Apache-2.0
// The agent's own families: build info, collectors, the I/O source,
// topology changes and the NVMe subsystems seen.
#include <string>
#include <vector>

#include "exporters/labels.h"
#include "exporters/prometheus_internal.h"

namespace pathwise::exporters::internal {

using prometheus::MetricFamily;
using prometheus::MetricType;

void AddBuildFamilies(const std::string& version, const std::string& revision,
                      std::vector<MetricFamily>& out) {
  MetricFamily build_info = Family(
      "pathwise_build_info",
      "A metric with a constant '1' value labeled by version and revision of "
      "pathwise.",
      MetricType::Gauge);
  AddGauge(build_info, {{"version", version}, {"revision", revision}}, 1);
  out.push_back(std::move(build_info));
}

void AddAgentFamilies(const model::Snapshot& snapshot,
                      std::vector<MetricFamily>& out) {
  // Always present once a collection ran, even with nothing to report.
  MetricFamily duration =
      Family("pathwise_collector_duration_seconds",
             "Duration of the last run of a collector.", MetricType::Gauge);
  MetricFamily success = Family(
      "pathwise_collector_success",
      "Whether a collector's last run read all of its inputs (1) or not (0).",
      MetricType::Gauge);
  for (const model::CollectorResult& r : snapshot.collectors) {
    AddGauge(duration, {{"collector", r.name}}, r.duration_seconds);
    AddGauge(success, {{"collector", r.name}}, r.success ? 1 : 0);
  }
  out.push_back(std::move(duration));
  out.push_back(std::move(success));

  MetricFamily sampler =
      Family("pathwise_sampler_info",
             "Where the I/O statistics come from: sysfs stat files or the eBPF "
             "sampler.",
             MetricType::Gauge);
  if (snapshot.io_source != model::IoSource::kNone) {
    AddGauge(sampler,
             {{"source", std::string(IoSourceLabel(snapshot.io_source))}}, 1);
  }
  Push(out, std::move(sampler));

  MetricFamily changes = Family(
      "pathwise_topology_changes_total",
      "Times a rescan found subsystems, heads, paths or controllers added, "
      "removed or re-linked.",
      MetricType::Counter);
  AddCounter(changes, {}, static_cast<double>(snapshot.topology_changes_total));
  out.push_back(std::move(changes));

  // Always present, so that a host with nothing to watch shows as 0 rather
  // than as an absent series.
  const model::MultipathPresence presence = model::Presence(snapshot.topology);
  MetricFamily subsystems =
      Family("pathwise_subsystems",
             "NVMe subsystems the last scan found, with or without multipath.",
             MetricType::Gauge);
  AddGauge(subsystems, {}, presence.subsystems);
  out.push_back(std::move(subsystems));
  MetricFamily multipath =
      Family("pathwise_multipath_subsystems",
             "NVMe subsystems with at least one multipath head. 0: nothing to "
             "watch; is nvme_core loaded with multipath=Y?",
             MetricType::Gauge);
  AddGauge(multipath, {}, presence.multipath_subsystems);
  out.push_back(std::move(multipath));
}

}  // namespace pathwise::exporters::internal

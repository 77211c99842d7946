// SPDX-License-Identifier: Apache-2.0
// The controller probes' families (control/prober.h): per controller the
// latency of successful probes and the failures by reason. Nothing when
// probes are off.
#include <string>
#include <vector>

#include "exporters/labels.h"
#include "exporters/prometheus_internal.h"

namespace pathwise::exporters::internal {

using prometheus::MetricFamily;
using prometheus::MetricType;

void AddControllerProbeFamilies(const model::Snapshot& snapshot,
                                HistogramBuckets buckets,
                                std::vector<MetricFamily>& out) {
  MetricFamily latency =
      Family("pathwise_controller_probe_latency_seconds",
             "Latency of a controller's successful probes (an NVMe Identify "
             "Controller admin command every --probe-interval), submission to "
             "completion.",
             MetricType::Histogram);
  MetricFamily failures = Family(
      "pathwise_controller_probe_failures_total",
      "Failed controller probes by reason: timeout (no completion within "
      "--probe-timeout), transport (the kernel failed the command: "
      "controller not live, gone, or the command cancelled), unavailable "
      "(pathwise cannot probe: no char device or no permission), or the "
      "NVMe status class of the completion.",
      MetricType::Counter);
  for (const auto& [name, stats] : snapshot.controller_probe) {
    const Labels base = {{"controller", name}};
    AddHistogram(latency, base, stats.latency,
                 static_cast<double>(stats.latency_sum_ns) / 1e9, buckets);
    for (model::ProbeFailure f : model::kAllProbeFailures) {
      AddCounter(failures,
                 With(base, {{"reason", std::string(ProbeFailureLabel(f))}}),
                 static_cast<double>(stats.failures[model::Index(f)]));
    }
  }
  Push(out, std::move(latency));
  Push(out, std::move(failures));
}

}  // namespace pathwise::exporters::internal

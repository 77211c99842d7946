// SPDX-License-Identifier: Apache-2.0
#include "exporters/prometheus_families.h"

#include <algorithm>

#include "exporters/prometheus_internal.h"
#include "exporters/utf8.h"

namespace pathwise::exporters {

using prometheus::MetricFamily;

namespace {

// Replaces what is not UTF-8 in the label values of `families` (sysfs
// strings: see exporters/utf8.h); returns how many values it changed.
size_t ReplaceInvalidLabelValues(std::vector<MetricFamily>& families) {
  size_t changed = 0;
  for (MetricFamily& f : families) {
    for (prometheus::ClientMetric& m : f.metric) {
      for (prometheus::ClientMetric::Label& l : m.label) {
        // ASCII, the common case, is valid UTF-8: skip the decoder.
        if (std::all_of(l.value.begin(), l.value.end(),
                        [](char c) { return (c & 0x80) == 0; })) {
          continue;
        }
        if (ReplaceInvalidUtf8(l.value) > 0) ++changed;
      }
    }
  }
  return changed;
}

// pathwise_invalid_utf8_label_values, only when some value was replaced: a
// gauge of this exposition, not a counter, since every scrape renders the
// same snapshot's strings again (a counter would grow with the scrape rate).
void AddInvalidUtf8Family(size_t changed, std::vector<MetricFamily>& out) {
  if (changed == 0) return;
  MetricFamily f = internal::Family(
      "pathwise_invalid_utf8_label_values",
      "Label values of this exposition that were not valid UTF-8 (sysfs "
      "strings such as a serial or model copied raw from the device); each "
      "invalid sequence is shown as U+FFFD.",
      prometheus::MetricType::Gauge);
  internal::AddGauge(f, {}, static_cast<double>(changed));
  out.push_back(std::move(f));
}

}  // namespace

std::vector<MetricFamily> BuildFamilies(const model::Snapshot* snapshot,
                                        const BuildInfo& build,
                                        const ExpositionOptions& options) {
  std::vector<MetricFamily> out;
  internal::AddBuildFamilies(build.version, build.revision, out);
  if (snapshot != nullptr) {
    // The order of the groups is the order of the exposition.
    internal::AddAgentFamilies(*snapshot, out);
    internal::AddTopologyFamilies(snapshot->topology, options.profile, out);
    internal::AddPathHeadIoFamilies(*snapshot, options, out);
    if (snapshot->scoring) {
      internal::AddScoringFamilies(snapshot->topology, *snapshot->scoring,
                                   options.profile, out);
    }
    internal::AddPathNvmeFamilies(*snapshot, options.profile, out);
    internal::AddControllerProbeFamilies(*snapshot, options.histogram_buckets,
                                         out);
    internal::AddKernelDiagFamilies(snapshot->topology, out);
    internal::AddDeviceIoFamilies(*snapshot, options, out);
    internal::AddSamplerFamilies(*snapshot, out);
    if (snapshot->queues) internal::AddQueueFamilies(*snapshot->queues, out);
    if (snapshot->actuator) {
      internal::AddActuatorFamilies(*snapshot->actuator, out);
    }
    if (snapshot->head_iostats) {
      internal::AddHeadIostatsFamilies(*snapshot->head_iostats, out);
    }
  }
  AddInvalidUtf8Family(ReplaceInvalidLabelValues(out), out);
  return out;
}

std::vector<MetricFamily> SnapshotCollectable::Collect() const {
  std::shared_ptr<const model::Snapshot> snap = store_.Load();
  return BuildFamilies(snap.get(), build_, options_);
}

}  // namespace pathwise::exporters

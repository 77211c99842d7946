#include "exporters/prometheus_families.h"

#include <sstream>

#include "exporters/prometheus_internal.h"
#include "prometheus/text_serializer.h"

namespace pathwise::exporters {

using prometheus::MetricFamily;

std::vector<MetricFamily> BuildFamilies(const model::Snapshot* snapshot,
                                        const BuildInfo& build) {
  std::vector<MetricFamily> out;
  internal::AddBuildFamilies(build.version, build.revision, out);
  if (snapshot == nullptr) return out;
  // The order of the groups is the order of the exposition.
  internal::AddAgentFamilies(*snapshot, out);
  internal::AddTopologyFamilies(snapshot->topology, out);
  internal::AddPathHeadIoFamilies(*snapshot, out);
  if (snapshot->scoring) {
    internal::AddScoringFamilies(snapshot->topology, *snapshot->scoring, out);
  }
  internal::AddPathNvmeFamilies(*snapshot, out);
  internal::AddDeviceIoFamilies(*snapshot, out);
  internal::AddSamplerFamilies(*snapshot, out);
  return out;
}

std::vector<MetricFamily> SnapshotCollectable::Collect() const {
  std::shared_ptr<const model::Snapshot> snap = store_.Load();
  return BuildFamilies(snap.get(), build_);
}

std::string SerializeText(const std::vector<MetricFamily>& families) {
  std::ostringstream os;
  prometheus::TextSerializer().Serialize(os, families);
  return os.str();
}

}  // namespace pathwise::exporters

// SPDX-License-Identifier: Apache-2.0
// Renders a model::Snapshot as Prometheus metric families. The metric names
// and label sets are a contract; see docs/metrics.md.
//
// Families are built at scrape time from the current snapshot, so objects
// that vanished from the topology vanish from the exposition with no stale
// series left behind.
#ifndef PATHWISE_EXPORTERS_PROMETHEUS_FAMILIES_H_
#define PATHWISE_EXPORTERS_PROMETHEUS_FAMILIES_H_

#include <memory>
#include <string>
#include <vector>

#include "exporters/histogram_exposition.h"
#include "model/snapshot_store.h"
#include "model/topology.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace pathwise::exporters {

struct BuildInfo {
  std::string version;
  std::string revision;
};

// --metrics.profile: which series an exposition carries. kFull is every
// series pathwise has. kDefault is what a fleet can afford per path (the
// README's "What earns a series by default"):
// - no pathwise_head_io_* but pathwise_head_io_inflight: a head's I/O
//   series are the sums of its paths' (sum by (subsystem, head));
// - path and device I/O: an op's series once it completed an I/O, bytes
//   and block-layer errors once nonzero; io_time_seconds_total only where
//   the op has no latency histogram (the histogram's _sum is that counter);
//   with kSparse buckets, latency histograms of read, write and passthru
//   only (other ops keep their counters);
// - StateSets per path (pathwise_path_ana_state, pathwise_path_health):
//   the current state's series only, 1;
// - pathwise_path_nvme_errors_total: the status classes seen so far.
// Everything else (per controller, subsystem, head or agent) is as kFull.
enum class MetricsProfile { kDefault, kFull };

// What varies between expositions of one snapshot.
struct ExpositionOptions {
  // The classic buckets of every latency histogram: the coarse set, the
  // sparse set (the default profile's) or the kernel's fine layout (what
  // the protobuf exposition turns into native histograms). See
  // exporters/histogram_exposition.h.
  HistogramBuckets histogram_buckets = HistogramBuckets::kCoarse;
  MetricsProfile profile = MetricsProfile::kFull;
};

// All families for `snapshot` (which may be null: before the first
// collection only the build info is exported). Families with no series are
// left out, except the agent's own metrics, so a host without NVMe exports
// only pathwise_build_info, pathwise_collector_*, pathwise_sampler_info and
// pathwise_topology_changes_total. Label values that are not valid UTF-8
// are repaired (exporters/utf8.h) and counted by
// pathwise_invalid_utf8_label_values, present only when nonzero.
// A latency histogram with no observation (an op never seen on a path, a
// controller whose probes never succeeded) is left out.
std::vector<prometheus::MetricFamily> BuildFamilies(
    const model::Snapshot* snapshot, const BuildInfo& build,
    const ExpositionOptions& options = {});

// A prometheus::Collectable that renders the store's current snapshot.
class SnapshotCollectable : public prometheus::Collectable {
 public:
  SnapshotCollectable(const model::SnapshotStore& store, BuildInfo build,
                      ExpositionOptions options = {})
      : store_(store), build_(std::move(build)), options_(options) {}

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const model::SnapshotStore& store_;
  BuildInfo build_;
  ExpositionOptions options_;
};

// The text exposition format (0.0.4) of `families`: what
// prometheus::TextSerializer writes, byte for byte, written directly into
// one string (TextSerializer goes through an ostream per number and was
// most of a scrape's time).
std::string SerializeText(
    const std::vector<prometheus::MetricFamily>& families);

inline constexpr char kTextContentType[] =
    "text/plain; version=0.0.4; charset=utf-8";

}  // namespace pathwise::exporters

#endif  // PATHWISE_EXPORTERS_PROMETHEUS_FAMILIES_H_

// SPDX-License-Identifier: Apache-2.0
// I/O families of paths, heads and other block devices: the counters the
// sysfs fallback and the eBPF sampler share, and the sampler's latency
// histograms and block-layer errors.
#include <string>
#include <vector>

#include "exporters/labels.h"
#include "exporters/prometheus_internal.h"

namespace pathwise::exporters::internal {
namespace {

using prometheus::MetricFamily;
using prometheus::MetricType;

// The I/O families of one device kind ("path", "head" or "device"). Every
// kind has the same families with the same meaning (the I/O collectors make
// a head's counters the sum of its paths'), so a query moves between the
// levels by changing only the kind in the name.
struct IoFamilies {
  MetricFamily completed, bytes, time, inflight, latency, errors;
  ExpositionOptions options;

  IoFamilies(const std::string& kind, const ExpositionOptions& o)
      : completed(Family("pathwise_" + kind + "_io_completed_total",
                         "Completed I/Os of the " + kind + " by operation.",
                         MetricType::Counter)),
        bytes(Family("pathwise_" + kind + "_io_bytes_total",
                     "Bytes transferred by completed I/Os of the " + kind +
                         " by operation.",
                     MetricType::Counter)),
        time(Family(
            "pathwise_" + kind + "_io_time_seconds_total",
            "Summed time of completed I/Os of the " + kind + " by operation.",
            MetricType::Counter)),
        inflight(Family("pathwise_" + kind + "_io_inflight",
                        "I/Os of the " + kind + " issued but not completed.",
                        MetricType::Gauge)),
        latency(Family("pathwise_" + kind + "_io_latency_seconds",
                       "Latency of completed I/Os of the " + kind +
                           " from issue to the device to completion, by "
                           "operation (eBPF sampler).",
                       MetricType::Histogram)),
        // Block-layer errors (a non-zero blk_status_t at completion), not
        // NVMe status codes: those are pathwise_path_nvme_errors_total.
        errors(Family("pathwise_" + kind + "_io_errors_total",
                      "Completed I/Os of the " + kind +
                          " with a block-layer error, by operation (eBPF "
                          "sampler).",
                      MetricType::Counter)),
        options(o) {}

  void Add(const Labels& labels, const model::IoStats& io) {
    for (model::Op o : kOpExportOrder) {
      const std::optional<model::OpStats>& op = io.op(o);
      if (!op) continue;
      Labels l = With(labels, {{"op", std::string(OpLabel(o))}});
      if (options.profile == MetricsProfile::kDefault) {
        AddDefault(o, *op, std::move(l));
        continue;
      }
      AddCounter(completed, l, static_cast<double>(op->completed));
      AddCounter(bytes, l, static_cast<double>(op->bytes));
      AddCounter(time, l, static_cast<double>(op->time_ns) / 1e9);
      if (op->latency) {
        AddHistogram(latency, l, *op->latency,
                     static_cast<double>(op->time_ns) / 1e9,
                     options.histogram_buckets);
      }
      if (op->errors) AddCounter(errors, l, static_cast<double>(*op->errors));
    }
    if (io.inflight) {
      AddGauge(inflight, labels, static_cast<double>(*io.inflight));
    }
  }

  // The default profile's series of one op (prometheus_families.h): none
  // before it completed an I/O or failed one; bytes and errors once
  // nonzero; the time counter only where no histogram carries it as _sum.
  void AddDefault(model::Op o, const model::OpStats& op, Labels l) {
    const uint64_t errs = op.errors.value_or(0);
    if (op.completed == 0 && errs == 0) return;
    AddCounter(completed, l, static_cast<double>(op.completed));
    if (op.bytes > 0) AddCounter(bytes, l, static_cast<double>(op.bytes));
    const double seconds = static_cast<double>(op.time_ns) / 1e9;
    const bool histogram =
        op.latency && op.latency->Count() > 0 &&
        (options.histogram_buckets != HistogramBuckets::kSparse ||
         o == model::Op::kRead || o == model::Op::kWrite ||
         o == model::Op::kPassthru);
    if (histogram) {
      AddHistogram(latency, l, *op.latency, seconds, options.histogram_buckets);
    } else {
      AddCounter(time, l, seconds);
    }
    if (errs > 0) AddCounter(errors, std::move(l), static_cast<double>(errs));
  }

  void MoveTo(std::vector<MetricFamily>& out) {
    Push(out, std::move(completed));
    Push(out, std::move(bytes));
    Push(out, std::move(time));
    Push(out, std::move(inflight));
    Push(out, std::move(latency));
    Push(out, std::move(errors));
  }
};

}  // namespace

void AddPathHeadIoFamilies(const model::Snapshot& snapshot,
                           const ExpositionOptions& options,
                           std::vector<MetricFamily>& out) {
  const model::Topology& topo = snapshot.topology;
  IoFamilies path_io("path", options);
  for (const model::Path& p : topo.paths) {
    if (auto it = snapshot.path_io.find(p.name); it != snapshot.path_io.end()) {
      path_io.Add(PathLabels(p), it->second);
    }
  }
  path_io.MoveTo(out);

  IoFamilies head_io("head", options);
  for (const model::Head& h : topo.heads) {
    auto it = snapshot.head_io.find(h.name);
    if (it == snapshot.head_io.end()) continue;
    if (options.profile == MetricsProfile::kFull) {
      head_io.Add(HeadLabels(h), it->second);
    } else if (it->second.inflight) {
      // By default a head's I/O series are its paths' sums (by subsystem,
      // head); its in-flight count is kept, as the paths have none with the
      // eBPF sampler.
      AddGauge(head_io.inflight, HeadLabels(h),
               static_cast<double>(*it->second.inflight));
    }
  }
  head_io.MoveTo(out);
}

void AddDeviceIoFamilies(const model::Snapshot& snapshot,
                         const ExpositionOptions& options,
                         std::vector<MetricFamily>& out) {
  IoFamilies device_io("device", options);
  for (const auto& [name, io] : snapshot.device_io) {
    device_io.Add({{"device", name}}, io);
  }
  device_io.MoveTo(out);
}

}  // namespace pathwise::exporters::internal

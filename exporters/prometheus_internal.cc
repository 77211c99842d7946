#include "exporters/prometheus_internal.h"

#include <array>
#include <utility>

namespace pathwise::exporters::internal {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

MetricFamily Family(std::string name, std::string help, MetricType type) {
  MetricFamily f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = type;
  return f;
}

void AddGauge(MetricFamily& f, Labels labels, double value) {
  ClientMetric m;
  m.label = std::move(labels);
  m.gauge.value = value;
  f.metric.push_back(std::move(m));
}

void AddCounter(MetricFamily& f, Labels labels, double value) {
  ClientMetric m;
  m.label = std::move(labels);
  m.counter.value = value;
  f.metric.push_back(std::move(m));
}

void AddHistogram(MetricFamily& f, Labels labels,
                  const model::LatencyHistogram& h, double sum_seconds,
                  HistogramBuckets buckets) {
  // An op or probe that never completed once has nothing to show but 0s.
  if (h.Count() == 0) return;
  ClientMetric m;
  m.label = std::move(labels);
  using Hist = model::LatencyHistogram;
  static const std::array<double, Hist::kBuckets> kBounds = [] {
    std::array<double, Hist::kBuckets> b{};
    for (size_t i = 0; i < b.size(); ++i) b[i] = Hist::UpperBoundSeconds(i);
    return b;
  }();
  m.histogram.sample_sum = sum_seconds;
  if (buckets == HistogramBuckets::kCoarse) {
    static const std::array<double, kCoarseBuckets> kCoarseBounds = [] {
      std::array<double, kCoarseBuckets> b{};
      for (size_t j = 0; j < b.size(); ++j) b[j] = CoarseUpperBoundSeconds(j);
      return b;
    }();
    const auto cumulative = CoarseCumulative(h);
    m.histogram.sample_count = cumulative.back();
    m.histogram.bucket.resize(cumulative.size());
    for (size_t j = 0; j < cumulative.size(); ++j) {
      m.histogram.bucket[j] = {cumulative[j], kCoarseBounds[j]};
    }
  } else {
    const auto cumulative = h.Cumulative();
    m.histogram.sample_count = cumulative.back();
    m.histogram.bucket.resize(cumulative.size());
    for (size_t i = 0; i < cumulative.size(); ++i) {
      m.histogram.bucket[i] = {cumulative[i], kBounds[i]};
    }
  }
  f.metric.push_back(std::move(m));
}

Labels With(Labels base, std::initializer_list<ClientMetric::Label> more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

void Push(std::vector<MetricFamily>& out, MetricFamily f) {
  if (!f.metric.empty()) out.push_back(std::move(f));
}

Labels HeadLabels(const model::Head& h) {
  return {{"subsystem", h.subsystem}, {"head", h.name}};
}

Labels PathLabels(const model::Path& p) {
  return {{"subsystem", p.subsystem},
          {"head", p.head},
          {"path", p.name},
          {"controller", p.controller}};
}

}  // namespace pathwise::exporters::internal

// SPDX-License-Identifier: Apache-2.0
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

namespace {

// The upper bounds in seconds of a layout with N buckets, computed once.
template <size_t N, typename Bound>
std::array<double, N> Bounds(Bound bound) {
  std::array<double, N> b{};
  for (size_t i = 0; i < N; ++i) b[i] = bound(i);
  return b;
}

template <size_t N>
void SetBuckets(const std::array<uint64_t, N>& cumulative,
                const std::array<double, N>& bounds,
                ClientMetric::Histogram& out) {
  out.sample_count = cumulative.back();
  out.bucket.resize(N);
  for (size_t i = 0; i < N; ++i) out.bucket[i] = {cumulative[i], bounds[i]};
}

}  // namespace

void AddHistogram(MetricFamily& f, Labels labels,
                  const model::LatencyHistogram& h, double sum_seconds,
                  HistogramBuckets buckets) {
  using Hist = model::LatencyHistogram;
  // An op or probe that never completed once has nothing to show but 0s.
  if (h.Count() == 0) return;
  ClientMetric m;
  m.label = std::move(labels);
  m.histogram.sample_sum = sum_seconds;
  if (buckets == HistogramBuckets::kSparse) {
    static const auto kSparse = Bounds<kSparseBuckets>(SparseUpperBoundSeconds);
    SetBuckets(SparseCumulative(h), kSparse, m.histogram);
  } else if (buckets == HistogramBuckets::kCoarse) {
    static const auto kCoarse = Bounds<kCoarseBuckets>(CoarseUpperBoundSeconds);
    SetBuckets(CoarseCumulative(h), kCoarse, m.histogram);
  } else {
    static const auto kFine = Bounds<Hist::kBuckets>(Hist::UpperBoundSeconds);
    SetBuckets(h.Cumulative(), kFine, m.histogram);
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

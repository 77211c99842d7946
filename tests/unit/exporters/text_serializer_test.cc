// SPDX-License-Identifier: Apache-2.0
// SerializeText against prometheus-cpp's own TextSerializer, byte for byte:
// the exposition of a BPF-like synthetic topology in both bucket layouts,
// and the corners of the format (escapes, NaN and infinities, exponents,
// negative zero, timestamps, a summary, a histogram without +Inf).
#include "prometheus/text_serializer.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "exporters/prometheus_families.h"
#include "gtest/gtest.h"
#include "model/synthetic.h"

namespace pathwise::exporters {
namespace {

std::string Reference(const std::vector<prometheus::MetricFamily>& f) {
  std::ostringstream os;
  prometheus::TextSerializer().Serialize(os, f);
  return os.str();
}

TEST(TextSerializer, SameBytesAsPrometheusCpp) {
  const model::Snapshot s = model::MakeSyntheticSnapshot(
      {.subsystems = 2, .heads_per_subsystem = 2, .bpf = true});
  for (HistogramBuckets b :
       {HistogramBuckets::kCoarse, HistogramBuckets::kFine}) {
    const auto fams = BuildFamilies(&s, {"1.2.3", "abc"}, {b});
    const std::string got = SerializeText(fams);
    ASSERT_GT(got.size(), 10000u);
    EXPECT_EQ(got, Reference(fams));
  }
}

TEST(TextSerializer, CornersAsPrometheusCpp) {
  using prometheus::ClientMetric;
  using prometheus::MetricType;
  std::vector<prometheus::MetricFamily> fams(5);
  fams[0].name = "g";
  fams[0].help = "help with \\ and \"quotes\"";
  fams[0].type = MetricType::Gauge;
  const double values[] = {0.1,
                           1.5e-05,
                           123456789012345678.0,
                           0.30000000000000004,
                           1e21,
                           -0.0,
                           -3,
                           1e-300,
                           2e15,
                           1e16,
                           std::nan(""),
                           std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::max(),
                           std::numeric_limits<double>::denorm_min()};
  for (double v : values) {
    ClientMetric m;
    m.label = {{"a", "x\"y\\z\nw"}, {"b", ""}};
    m.gauge.value = v;
    fams[0].metric.push_back(m);
  }
  fams[1].name = "c";
  fams[1].type = MetricType::Counter;
  ClientMetric c;
  c.counter.value = 42;
  c.timestamp_ms = 1700000000123;
  fams[1].metric.push_back(c);
  fams[2].name = "h";
  fams[2].type = MetricType::Histogram;
  ClientMetric h;
  h.histogram.sample_count = 9;
  h.histogram.sample_sum = 0.25;
  h.histogram.bucket = {{1, 0.001}, {5, 0.5}};  // no +Inf: written anyway
  fams[2].metric.push_back(h);
  h.label = {{"k", "v"}};
  h.histogram.bucket.push_back({9, std::numeric_limits<double>::infinity()});
  fams[2].metric.push_back(h);
  fams[3].name = "s";
  fams[3].type = MetricType::Summary;
  ClientMetric s;
  s.summary.sample_count = 3;
  s.summary.sample_sum = 1.5;
  s.summary.quantile = {{0.5, 0.2}, {0.99, 0.9}};
  fams[3].metric.push_back(s);
  fams[4].name = "u";
  fams[4].type = MetricType::Untyped;
  ClientMetric u;
  u.untyped.value = 7;
  fams[4].metric.push_back(u);
  EXPECT_EQ(SerializeText(fams), Reference(fams));
}

}  // namespace
}  // namespace pathwise::exporters

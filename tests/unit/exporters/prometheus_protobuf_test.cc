// SPDX-License-Identifier: Apache-2.0
// The protobuf exposition decoded back with libprotobuf and compared with
// the families it was written from: every family, label and value, native
// histograms for the kernel layout (and their counts back per kernel
// bucket), classic buckets otherwise; and the Accept negotiation.
#include "exporters/prometheus_protobuf.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "exporters/histogram_exposition.h"
#include "exporters/prometheus_families.h"
#include "exporters/proto/metrics.pb.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "gtest/gtest.h"
#include "model/synthetic.h"

namespace pathwise::exporters {
namespace {

namespace pb = ::io::prometheus::client;
using Hist = model::LatencyHistogram;

// The delimited stream: a varint length, then a MetricFamily, repeated.
std::vector<pb::MetricFamily> Decode(const std::string& bytes) {
  google::protobuf::io::ArrayInputStream raw(bytes.data(),
                                             static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream in(&raw);
  std::vector<pb::MetricFamily> out;
  uint32_t size = 0;
  while (in.ReadVarint32(&size)) {
    const auto limit = in.PushLimit(static_cast<int>(size));
    pb::MetricFamily f;
    EXPECT_TRUE(f.ParseFromCodedStream(&in));
    EXPECT_TRUE(in.ConsumedEntireMessage());
    in.PopLimit(limit);
    out.push_back(std::move(f));
  }
  EXPECT_EQ(in.CurrentPosition(), static_cast<int>(bytes.size()));
  return out;
}

model::Snapshot BpfSnapshot() {
  model::Snapshot s = model::MakeSyntheticSnapshot(
      {.subsystems = 1, .heads_per_subsystem = 2, .bpf = true});
  // A probe histogram too, with something in the zero bucket and in +Inf.
  model::ControllerProbeStats& p = s.controller_probe["nvme0"];
  p.latency.Observe(500, 2);              // 0.5 us: the zero bucket
  p.latency.Observe(150'000, 5);          // 150 us
  p.latency.Observe(100'000'000'000, 1);  // 100 s: +Inf
  p.latency_sum_ns = 2 * 500 + 5 * 150'000 + 100'000'000'000;
  return s;
}

// Expands spans and deltas into index -> count.
std::map<int32_t, int64_t> Expand(const pb::Histogram& h) {
  std::map<int32_t, int64_t> out;
  int32_t index = 0;
  int64_t count = 0;
  int d = 0;
  for (const pb::BucketSpan& s : h.positive_span()) {
    index += s.offset();
    for (uint32_t j = 0; j < s.length(); ++j, ++index) {
      count += h.positive_delta(d++);
      out[index] = count;
    }
  }
  EXPECT_EQ(d, h.positive_delta_size());
  return out;
}

TEST(ProtobufExposition, DecodesBackToTheSameFamilies) {
  const model::Snapshot s = BpfSnapshot();
  const auto fams =
      BuildFamilies(&s, {"1.2.3", "abc"}, {HistogramBuckets::kFine});
  const auto decoded = Decode(SerializeProtobuf(fams));
  ASSERT_EQ(decoded.size(), fams.size());
  int native = 0;
  for (size_t i = 0; i < fams.size(); ++i) {
    const prometheus::MetricFamily& f = fams[i];
    const pb::MetricFamily& d = decoded[i];
    SCOPED_TRACE(f.name);
    EXPECT_EQ(d.name(), f.name);
    EXPECT_EQ(d.help(), f.help);
    ASSERT_EQ(d.metric_size(), static_cast<int>(f.metric.size()));
    for (size_t m = 0; m < f.metric.size(); ++m) {
      const prometheus::ClientMetric& want = f.metric[m];
      const pb::Metric& got = d.metric(static_cast<int>(m));
      ASSERT_EQ(got.label_size(), static_cast<int>(want.label.size()));
      for (size_t l = 0; l < want.label.size(); ++l) {
        EXPECT_EQ(got.label(static_cast<int>(l)).name(), want.label[l].name);
        EXPECT_EQ(got.label(static_cast<int>(l)).value(), want.label[l].value);
      }
      switch (f.type) {
        case prometheus::MetricType::Counter:
          EXPECT_EQ(d.type(), pb::COUNTER);
          EXPECT_EQ(got.counter().value(), want.counter.value);
          break;
        case prometheus::MetricType::Gauge:
          EXPECT_EQ(d.type(), pb::GAUGE);
          EXPECT_EQ(got.gauge().value(), want.gauge.value);
          break;
        case prometheus::MetricType::Histogram: {
          EXPECT_EQ(d.type(), pb::HISTOGRAM);
          const pb::Histogram& h = got.histogram();
          EXPECT_EQ(h.sample_count(), want.histogram.sample_count);
          EXPECT_EQ(h.sample_sum(), want.histogram.sample_sum);
          EXPECT_EQ(h.bucket_size(), 0) << "native only";
          EXPECT_EQ(h.schema(), 2);
          EXPECT_EQ(h.zero_threshold(), 1.024e-6);
          // Back to per-kernel-slot counts.
          const auto& b = want.histogram.bucket;
          EXPECT_EQ(h.zero_count(), b[0].cumulative_count);
          std::map<int32_t, int64_t> expect;
          for (size_t k = 1; k < b.size(); ++k) {
            const uint64_t c =
                b[k].cumulative_count - b[k - 1].cumulative_count;
            if (c > 0) {
              expect[NativeBucketOfKernelSlot(k)] = static_cast<int64_t>(c);
            }
          }
          EXPECT_EQ(Expand(h), expect);
          int64_t total = static_cast<int64_t>(h.zero_count());
          for (const auto& [index, c] : Expand(h)) total += c;
          EXPECT_EQ(total, static_cast<int64_t>(h.sample_count()));
          ++native;
          break;
        }
        default:
          ADD_FAILURE() << "unexpected type";
      }
    }
  }
  // 18 I/O histograms (discard has no I/O) + the probe's.
  EXPECT_EQ(native, 19);
}

TEST(ProtobufExposition, ProbeHistogramUsesZeroBucketAndBucketAfter68s) {
  const model::Snapshot s = BpfSnapshot();
  const auto decoded = Decode(SerializeProtobuf(
      BuildFamilies(&s, {"1", "x"}, {HistogramBuckets::kFine})));
  const pb::MetricFamily* probe = nullptr;
  for (const auto& f : decoded) {
    if (f.name() == "pathwise_controller_probe_latency_seconds") probe = &f;
  }
  ASSERT_NE(probe, nullptr);
  const pb::Histogram& h = probe->metric(0).histogram();
  EXPECT_EQ(h.zero_count(), 2u);
  const auto buckets = Expand(h);
  ASSERT_EQ(buckets.size(), 2u);
  EXPECT_EQ(buckets.begin()->second, 5);
  EXPECT_EQ(buckets.rbegin()->first,
            NativeBucketOfKernelSlot(Hist::kFiniteBuckets - 1) + 1);
  EXPECT_EQ(buckets.rbegin()->second, 1);
  EXPECT_GT(std::exp2((buckets.rbegin()->first - 1) / 4.0), 68.719476736);
}

// A histogram that is not the kernel's layout (coarse buckets) stays
// classic, buckets as given.
TEST(ProtobufExposition, OtherLayoutsStayClassic) {
  const model::Snapshot s = BpfSnapshot();
  const auto fams = BuildFamilies(&s, {"1", "x"});  // coarse
  const auto decoded = Decode(SerializeProtobuf(fams));
  int classic = 0;
  for (size_t i = 0; i < fams.size(); ++i) {
    if (fams[i].type != prometheus::MetricType::Histogram) continue;
    for (int m = 0; m < decoded[i].metric_size(); ++m) {
      const pb::Histogram& h = decoded[i].metric(m).histogram();
      EXPECT_FALSE(h.has_schema());
      ASSERT_EQ(h.bucket_size(), static_cast<int>(kCoarseBuckets));
      for (int j = 0; j < h.bucket_size(); ++j) {
        EXPECT_EQ(h.bucket(j).upper_bound(), CoarseUpperBoundSeconds(j));
        EXPECT_EQ(h.bucket(j).cumulative_count(),
                  fams[i].metric[m].histogram.bucket[j].cumulative_count);
      }
      ++classic;
    }
  }
  EXPECT_EQ(classic, 19);
}

TEST(ProtobufExposition, BeforeTheFirstCollectionOnlyBuildInfo) {
  const auto decoded =
      Decode(SerializeProtobuf(BuildFamilies(nullptr, {"1", "x"})));
  ASSERT_EQ(decoded.size(), 1u);
  EXPECT_EQ(decoded[0].name(), "pathwise_build_info");
}

TEST(AcceptNegotiation, PrometheusWithNativeHistogramsGetsProtobuf) {
  // Prometheus 2.42 with --enable-feature=native-histograms.
  EXPECT_TRUE(PrefersProtobuf(
      "application/vnd.google.protobuf;proto=io.prometheus.client."
      "MetricFamily;encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3,"
      "*/*;q=0.2"));
  EXPECT_TRUE(PrefersProtobuf(
      "application/vnd.google.protobuf; proto=io.prometheus.client."
      "MetricFamily; encoding=delimited"));
}

TEST(AcceptNegotiation, EveryoneElseGetsText) {
  // Prometheus without the feature, curl, a browser, nothing at all.
  EXPECT_FALSE(PrefersProtobuf(
      "application/openmetrics-text;version=1.0.0,application/"
      "openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,"
      "*/*;q=0.1"));
  EXPECT_FALSE(PrefersProtobuf("*/*"));
  EXPECT_FALSE(PrefersProtobuf(""));
  EXPECT_FALSE(PrefersProtobuf("text/html,application/xhtml+xml,*/*;q=0.8"));
  // Protobuf, but not the delimited MetricFamily stream, or refused.
  EXPECT_FALSE(PrefersProtobuf("application/vnd.google.protobuf"));
  EXPECT_FALSE(PrefersProtobuf(
      "application/vnd.google.protobuf;proto=io.prometheus.client."
      "MetricFamily;encoding=text"));
  EXPECT_FALSE(PrefersProtobuf(
      "application/vnd.google.protobuf;proto=io.prometheus.client."
      "MetricFamily;encoding=delimited;q=0"));
  // Text preferred over protobuf.
  EXPECT_FALSE(PrefersProtobuf(
      "text/plain;q=0.9,application/vnd.google.protobuf;proto=io.prometheus."
      "client.MetricFamily;encoding=delimited;q=0.5"));
}

}  // namespace
}  // namespace pathwise::exporters

// SPDX-License-Identifier: Apache-2.0
#include "exporters/prometheus_protobuf.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "exporters/histogram_exposition.h"
#include "exporters/proto/metrics.pb.h"
#include "google/protobuf/arena.h"

namespace pathwise::exporters {
namespace {

namespace pb = ::io::prometheus::client;
using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

pb::MetricType ToProto(MetricType t) {
  switch (t) {
    case MetricType::Counter:
      return pb::COUNTER;
    case MetricType::Gauge:
      return pb::GAUGE;
    case MetricType::Summary:
      return pb::SUMMARY;
    case MetricType::Histogram:
      return pb::HISTOGRAM;
    case MetricType::Untyped:
      break;
  }
  return pb::UNTYPED;
}

// Whether `h` has exactly the kernel's fine layout (what AddHistogram
// builds), the one the native mapping is defined for.
bool IsKernelLayout(const ClientMetric::Histogram& h) {
  using Hist = model::LatencyHistogram;
  if (h.bucket.size() != Hist::kBuckets) return false;
  for (size_t i = 0; i < Hist::kBuckets; ++i) {
    if (h.bucket[i].upper_bound != Hist::UpperBoundSeconds(i)) return false;
  }
  return true;
}

void SetNative(const ClientMetric::Histogram& h, pb::Histogram& out) {
  std::array<uint64_t, model::LatencyHistogram::kBuckets> cumulative;
  for (size_t i = 0; i < cumulative.size(); ++i) {
    cumulative[i] = h.bucket[i].cumulative_count;
  }
  const NativeHistogram n = ToNative(cumulative);
  out.set_schema(kNativeSchema);
  out.set_zero_threshold(NativeZeroThresholdSeconds());
  out.set_zero_count(n.zero_count);
  for (const NativeHistogram::Span& s : n.spans) {
    pb::BucketSpan* span = out.add_positive_span();
    span->set_offset(s.offset);
    span->set_length(s.length);
  }
  for (int64_t d : n.deltas) out.add_positive_delta(d);
}

void SetHistogram(const ClientMetric::Histogram& h, pb::Histogram& out) {
  out.set_sample_count(h.sample_count);
  out.set_sample_sum(h.sample_sum);
  if (IsKernelLayout(h)) {
    SetNative(h, out);
    return;
  }
  for (const ClientMetric::Bucket& b : h.bucket) {
    pb::Bucket* bucket = out.add_bucket();
    bucket->set_cumulative_count(b.cumulative_count);
    bucket->set_upper_bound(b.upper_bound);
  }
}

void SetMetric(MetricType type, const ClientMetric& m, pb::Metric& out) {
  for (const ClientMetric::Label& l : m.label) {
    pb::LabelPair* p = out.add_label();
    p->set_name(l.name);
    p->set_value(l.value);
  }
  if (m.timestamp_ms != 0) out.set_timestamp_ms(m.timestamp_ms);
  switch (type) {
    case MetricType::Counter:
      out.mutable_counter()->set_value(m.counter.value);
      return;
    case MetricType::Gauge:
      out.mutable_gauge()->set_value(m.gauge.value);
      return;
    case MetricType::Summary: {
      pb::Summary* s = out.mutable_summary();
      s->set_sample_count(m.summary.sample_count);
      s->set_sample_sum(m.summary.sample_sum);
      for (const ClientMetric::Quantile& q : m.summary.quantile) {
        pb::Quantile* pq = s->add_quantile();
        pq->set_quantile(q.quantile);
        pq->set_value(q.value);
      }
      return;
    }
    case MetricType::Histogram:
      SetHistogram(m.histogram, *out.mutable_histogram());
      return;
    case MetricType::Untyped:
      out.mutable_untyped()->set_value(m.untyped.value);
      return;
  }
}

void AppendVarint(uint64_t v, std::string& out) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

// A media range of an Accept header: its type/subtype, lowercased, and its
// parameters but q; `q` is 1 unless given.
struct MediaRange {
  std::string type;
  std::vector<std::pair<std::string, std::string>> params;
  double q = 1;

  std::optional<std::string> Param(absl::string_view name) const {
    for (const auto& [k, v] : params) {
      if (k == name) return v;
    }
    return std::nullopt;
  }
};

MediaRange ParseRange(absl::string_view text) {
  MediaRange r;
  bool first = true;
  for (absl::string_view part : absl::StrSplit(text, ';')) {
    part = absl::StripAsciiWhitespace(part);
    if (first) {
      r.type = absl::AsciiStrToLower(part);
      first = false;
      continue;
    }
    const size_t eq = part.find('=');
    if (eq == absl::string_view::npos) continue;
    std::string key =
        absl::AsciiStrToLower(absl::StripAsciiWhitespace(part.substr(0, eq)));
    absl::string_view value = absl::StripAsciiWhitespace(part.substr(eq + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
      value = value.substr(1, value.size() - 2);
    }
    if (key == "q") {
      double q = 0;
      r.q = absl::SimpleAtod(value, &q) ? std::clamp(q, 0.0, 1.0) : 0;
    } else {
      r.params.emplace_back(std::move(key), std::string(value));
    }
  }
  return r;
}

}  // namespace

std::string SerializeProtobuf(const std::vector<MetricFamily>& families) {
  std::string out;
  std::string one;
  // An arena per family: a family of 1000 histograms is some 10^4 small
  // messages and strings, which malloc and free one by one made most of the
  // time.
  google::protobuf::ArenaOptions options;
  options.start_block_size = 64 << 10;
  options.max_block_size = 1 << 20;
  for (const MetricFamily& f : families) {
    google::protobuf::Arena arena(options);
    auto* msg =
        google::protobuf::Arena::CreateMessage<pb::MetricFamily>(&arena);
    msg->set_name(f.name);
    if (!f.help.empty()) msg->set_help(f.help);
    msg->set_type(ToProto(f.type));
    msg->mutable_metric()->Reserve(static_cast<int>(f.metric.size()));
    for (const ClientMetric& m : f.metric) {
      SetMetric(f.type, m, *msg->add_metric());
    }
    one.clear();
    msg->AppendToString(&one);
    AppendVarint(one.size(), out);
    out += one;
  }
  return out;
}

bool PrefersProtobuf(absl::string_view accept) {
  double proto_q = 0;
  // Most specific match wins for text: text/plain over text/* over */*.
  std::optional<double> text_q[3];
  for (absl::string_view item : absl::StrSplit(accept, ',')) {
    if (absl::StripAsciiWhitespace(item).empty()) continue;
    const MediaRange r = ParseRange(item);
    if (r.type == "application/vnd.google.protobuf") {
      const auto proto = r.Param("proto");
      const auto encoding = r.Param("encoding");
      if (proto == "io.prometheus.client.MetricFamily" &&
          encoding == "delimited") {
        proto_q = std::max(proto_q, r.q);
      }
    } else if (r.type == "text/plain") {
      text_q[0] = std::max(text_q[0].value_or(0), r.q);
    } else if (r.type == "text/*") {
      text_q[1] = std::max(text_q[1].value_or(0), r.q);
    } else if (r.type == "*/*") {
      text_q[2] = std::max(text_q[2].value_or(0), r.q);
    }
  }
  double text = 0;
  for (const std::optional<double>& q : text_q) {
    if (q) {
      text = *q;
      break;
    }
  }
  return proto_q > 0 && proto_q > text;
}

}  // namespace pathwise::exporters

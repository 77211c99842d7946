// SPDX-License-Identifier: Apache-2.0
// The text exposition format (0.0.4), written straight into one string.
// Byte for byte what prometheus-cpp 1.0.1's TextSerializer writes (numbers
// as printf's %.16g, NaN as "Nan", infinities as "+Inf"/"-Inf", \\, \" and
// \n escaped in label values): tests/unit/exporters/text_serializer_test.cc
// compares the two. TextSerializer formats every number through an
// ostream, which was most of the time of a scrape.
#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "exporters/prometheus_families.h"

namespace pathwise::exporters {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

void AppendDouble(double v, std::string& out) {
  if (std::isnan(v)) {
    out += "Nan";
    return;
  }
  if (std::isinf(v)) {
    out += v < 0 ? "-Inf" : "+Inf";
    return;
  }
  char buf[64];
  // %.16g: 16 significant digits, fixed or exponent notation as printf
  // chooses; to_chars with a precision is specified to format so.
  const auto r =
      std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::general,
                    std::numeric_limits<double>::max_digits10 - 1);
  out.append(buf, r.ptr);
}

void AppendUint(uint64_t v, std::string& out) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, r.ptr);
}

bool NeedsEscape(const std::string& value) {
  for (char c : value) {
    if (c == '\n' || c == '\\' || c == '"') return true;
  }
  return false;
}

void AppendEscaped(const std::string& value, std::string& out) {
  if (!NeedsEscape(value)) {  // the common case
    out += value;
    return;
  }
  for (char c : value) {
    switch (c) {
      case '\n':
        out += "\\n";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      default:
        out += c;
    }
  }
}

// The labels of `m` as `{a="x",b="y"` without the closing brace, shared by
// every line of a histogram.
std::string LabelPrefix(const ClientMetric& m) {
  size_t size = 0;
  for (const ClientMetric::Label& l : m.label) {
    size += l.name.size() + l.value.size() + 4;
  }
  std::string s;
  s.reserve(size + 8);
  char sep = '{';
  for (const ClientMetric::Label& l : m.label) {
    s += sep;
    s += l.name;
    s += "=\"";
    AppendEscaped(l.value, s);
    s += '"';
    sep = ',';
  }
  return s;
}

// Name, suffix and labels up to the value, then the space.
void AppendHead(const MetricFamily& f, const char* suffix,
                const std::string& labels, std::string& out) {
  out += f.name;
  out += suffix;
  if (!labels.empty()) {
    out += labels;
    out += '}';
  }
  out += ' ';
}

void AppendTail(const ClientMetric& m, std::string& out) {
  if (m.timestamp_ms != 0) {
    out += ' ';
    out += std::to_string(m.timestamp_ms);
  }
  out += '\n';
}

// `name_bucket{labels,le="` of one histogram, the start of each of its
// bucket lines.
std::string BucketPrefix(const MetricFamily& f, const std::string& labels) {
  std::string p = f.name;
  p += "_bucket";
  p += labels.empty() ? "{" : labels;
  if (!labels.empty()) p += ',';
  p += "le=\"";
  return p;
}

void AppendBucket(const std::string& prefix, const std::string& le,
                  uint64_t count, const ClientMetric& m, std::string& out) {
  out += prefix;
  out += le;
  out += "\"} ";
  AppendUint(count, out);
  AppendTail(m, out);
}

// The `le` strings of a family's buckets, formatted once for all its
// histograms that share the bounds (all of pathwise's do).
class LeCache {
 public:
  const std::vector<std::string>& For(
      const std::vector<ClientMetric::Bucket>& buckets) {
    bool same = buckets.size() == bounds_.size();
    for (size_t i = 0; same && i < buckets.size(); ++i) {
      same = buckets[i].upper_bound == bounds_[i];
    }
    if (!same) {
      bounds_.clear();
      strings_.clear();
      for (const ClientMetric::Bucket& b : buckets) {
        bounds_.push_back(b.upper_bound);
        strings_.emplace_back();
        AppendDouble(b.upper_bound, strings_.back());
      }
    }
    return strings_;
  }

 private:
  std::vector<double> bounds_;
  std::vector<std::string> strings_;
};

void AppendHistogram(const MetricFamily& f, const ClientMetric& m, LeCache& les,
                     std::string& out) {
  const std::string labels = LabelPrefix(m);
  const ClientMetric::Histogram& h = m.histogram;
  AppendHead(f, "_count", labels, out);
  AppendUint(h.sample_count, out);
  AppendTail(m, out);
  AppendHead(f, "_sum", labels, out);
  AppendDouble(h.sample_sum, out);
  AppendTail(m, out);
  const std::string prefix = BucketPrefix(f, labels);
  const std::vector<std::string>& le = les.For(h.bucket);
  double last = -std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < h.bucket.size(); ++i) {
    AppendBucket(prefix, le[i], h.bucket[i].cumulative_count, m, out);
    last = h.bucket[i].upper_bound;
  }
  if (last != std::numeric_limits<double>::infinity()) {
    AppendBucket(prefix, "+Inf", h.sample_count, m, out);
  }
}

void AppendSummary(const MetricFamily& f, const ClientMetric& m,
                   std::string& out) {
  const std::string labels = LabelPrefix(m);
  AppendHead(f, "_count", labels, out);
  AppendUint(m.summary.sample_count, out);
  AppendTail(m, out);
  AppendHead(f, "_sum", labels, out);
  AppendDouble(m.summary.sample_sum, out);
  AppendTail(m, out);
  for (const ClientMetric::Quantile& q : m.summary.quantile) {
    out += f.name;
    out += labels.empty() ? "{" : labels;
    if (!labels.empty()) out += ',';
    out += "quantile=\"";
    AppendDouble(q.quantile, out);
    out += "\"} ";
    AppendDouble(q.value, out);
    AppendTail(m, out);
  }
}

const char* TypeName(MetricType t) {
  switch (t) {
    case MetricType::Counter:
      return "counter";
    case MetricType::Gauge:
      return "gauge";
    case MetricType::Summary:
      return "summary";
    case MetricType::Histogram:
      return "histogram";
    case MetricType::Untyped:
      break;
  }
  return "untyped";
}

void AppendFamily(const MetricFamily& f, std::string& out) {
  if (!f.help.empty()) {
    out += "# HELP ";
    out += f.name;
    out += ' ';
    out += f.help;
    out += '\n';
  }
  out += "# TYPE ";
  out += f.name;
  out += ' ';
  out += TypeName(f.type);
  out += '\n';
  LeCache les;
  for (const ClientMetric& m : f.metric) {
    switch (f.type) {
      case MetricType::Histogram:
        AppendHistogram(f, m, les, out);
        continue;
      case MetricType::Summary:
        AppendSummary(f, m, out);
        continue;
      case MetricType::Counter:
      case MetricType::Gauge:
      case MetricType::Untyped:
        break;
    }
    AppendHead(f, "", LabelPrefix(m), out);
    AppendDouble(f.type == MetricType::Counter ? m.counter.value
                 : f.type == MetricType::Gauge ? m.gauge.value
                                               : m.untyped.value,
                 out);
    AppendTail(m, out);
  }
}

}  // namespace

std::string SerializeText(const std::vector<MetricFamily>& families) {
  std::string out;
  // Room for a typical exposition without regrowing: ~100 bytes a series.
  size_t series = 0;
  for (const MetricFamily& f : families) series += f.metric.size();
  out.reserve(series * 128);
  for (const MetricFamily& f : families) AppendFamily(f, out);
  return out;
}

}  // namespace pathwise::exporters

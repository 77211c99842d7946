// SPDX-License-Identifier: Apache-2.0
// The protobuf exposition of the Prometheus families: length-delimited
// io.prometheus.client.MetricFamily messages (exporters/proto/metrics.proto),
// what a Prometheus with native histograms enabled asks for. Every latency
// histogram built in the kernel's fine layout is sent as a native histogram
// (exporters/histogram_exposition.h): one series at fine resolution, in
// place of one series per bucket. Everything else carries what the text
// exposition carries.
#ifndef PATHWISE_EXPORTERS_PROMETHEUS_PROTOBUF_H_
#define PATHWISE_EXPORTERS_PROMETHEUS_PROTOBUF_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "prometheus/metric_family.h"

namespace pathwise::exporters {

inline constexpr char kProtobufContentType[] =
    "application/vnd.google.protobuf; "
    "proto=io.prometheus.client.MetricFamily; encoding=delimited";

// `families` as delimited protobuf. Build them with HistogramBuckets::kFine:
// a histogram whose buckets are the kernel's layout becomes native, any
// other keeps its classic buckets.
std::string SerializeProtobuf(
    const std::vector<prometheus::MetricFamily>& families);

// Whether an Accept header prefers the delimited protobuf exposition to the
// text one: its q is above 0 and above text/plain's (or, without
// text/plain, text/*'s or */*'s). Prometheus sends the protobuf type first
// with q=1 (implied) when native histograms are enabled, and no protobuf
// otherwise; every other client gets text.
bool PrefersProtobuf(absl::string_view accept);

}  // namespace pathwise::exporters

#endif  // PATHWISE_EXPORTERS_PROMETHEUS_PROTOBUF_H_

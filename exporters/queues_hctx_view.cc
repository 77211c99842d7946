// SPDX-License-Identifier: Apache-2.0
// The per hardware queue part of the queue map's views (queues_view.h).
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "exporters/histogram_exposition.h"
#include "exporters/queues_view.h"

namespace pathwise::exporters {
namespace {

using nlohmann::json;

// The coarse buckets of a hardware queue's histogram, non-cumulative:
// [{le_ns, count}], le_ns null for +Inf.
json CoarseBucketsJson(const model::LatencyHistogram& h) {
  json out = json::array();
  const auto cumulative = CoarseCumulative(h);
  uint64_t below = 0;
  for (size_t j = 0; j < cumulative.size(); ++j) {
    json le = j < kCoarseFinite ? json(uint64_t{1} << (kCoarseMinShift + j))
                                : json(nullptr);
    out.push_back({{"le_ns", le}, {"count", cumulative[j] - below}});
    below = cumulative[j];
  }
  return out;
}

}  // namespace

nlohmann::json HctxIoToJson(const model::QueueMap& m) {
  json paths = json::array();
  for (const model::PathHctxIo& p : m.path_hctx) {
    json hctxs = json::array();
    for (const model::HctxIo& h : p.hctxs) {
      json inflight = nullptr;
      if (m.hctx_window_seconds > 0) {
        inflight =
            static_cast<double>(h.latency_sum_ns) / 1e9 / m.hctx_window_seconds;
      }
      hctxs.push_back({{"index", h.index},
                       {"qid", h.index + 1},
                       {"cpus", h.cpus},
                       {"completed", h.completed},
                       {"latency_sum_ns", h.latency_sum_ns},
                       {"remote_completions", h.remote_completions},
                       {"mean_inflight", inflight},
                       {"latency_buckets", CoarseBucketsJson(h.latency)}});
    }
    paths.push_back(
        {{"path", p.path}, {"controller", p.controller}, {"hctxs", hctxs}});
  }
  return {
      {"counted", m.hctx_io},
      {"unknown", m.hctx_io_unknown},
      {"window_seconds",
       m.hctx_window_seconds > 0 ? json(m.hctx_window_seconds) : json(nullptr)},
      {"dropped", m.hctx_dropped},
      {"paths", paths}};
}

std::string HctxIoToText(const model::QueueMap& m) {
  if (!m.hctx_io) {
    return absl::StrCat(
        "per hardware queue: ",
        m.hctx_io_unknown.empty() ? "not counted" : m.hctx_io_unknown, "\n");
  }
  const double window = m.hctx_window_seconds;
  std::string out =
      window > 0 ? absl::StrFormat("per hardware queue, over %.1f s:\n", window)
                 : std::string(
                       "per hardware queue, since the sampler "
                       "attached:\n");
  if (m.path_hctx.empty()) absl::StrAppend(&out, "  no NVMe path did I/O\n");
  for (const model::PathHctxIo& p : m.path_hctx) {
    absl::StrAppend(&out, "  ", p.path, " (", p.controller, ")\n");
    absl::StrAppend(
        &out, absl::StrFormat("    %-4s %-10s %10s %10s %9s %9s %9s %7s\n",
                              "qid", "cpus", "ios", "iops", "mean_us", "p99_us",
                              "inflight", "remote"));
    for (const model::HctxIo& h : p.hctxs) {
      const double mean_us = h.completed
                                 ? static_cast<double>(h.latency_sum_ns) / 1e3 /
                                       static_cast<double>(h.completed)
                                 : 0;
      const std::string p99 =
          h.completed ? absl::StrFormat("%.0f", h.latency.Quantile(0.99) * 1e6)
                      : "-";
      const std::string remote =
          h.completed ? absl::StrFormat(
                            "%.1f%%",
                            100.0 * static_cast<double>(h.remote_completions) /
                                static_cast<double>(h.completed))
                      : "-";
      const std::string iops =
          window > 0 ? absl::StrFormat(
                           "%.0f", static_cast<double>(h.completed) / window)
                     : "-";
      const std::string inflight =
          window > 0
              ? absl::StrFormat("%.2f", static_cast<double>(h.latency_sum_ns) /
                                            1e9 / window)
              : "-";
      absl::StrAppend(
          &out, absl::StrFormat(
                    "    %-4d %-10s %10d %10s %9.1f %9s %9s %7s\n", h.index + 1,
                    h.cpus.empty() ? "?" : CpuListText(h.cpus), h.completed,
                    iops, mean_us, p99, inflight, remote));
    }
  }
  absl::StrAppend(&out, "  counted on no hardware queue: ", m.hctx_dropped,
                  "\n");
  return out;
}

}  // namespace pathwise::exporters

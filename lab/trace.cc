// SPDX-License-Identifier: Apache-2.0
#include "lab/trace.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace pathwise::lab {

TraceRecorder::TraceRecorder(std::vector<policy::Policy> policies,
                             size_t max_rows)
    : policies_(std::move(policies)),
      max_rows_(max_rows),
      runs_(policies_.size()) {}

IoObserver TraceRecorder::Observer(size_t i) {
  Run* run = &runs_.at(i);
  const size_t max_rows = max_rows_;
  return [run, max_rows](const IoTrace& t) {
    if (run->rows.size() < max_rows) {
      run->rows.push_back(t);
    } else {
      ++run->dropped;
    }
  };
}

std::string TraceRecorder::Csv(const Scenario& sc) const {
  std::string out =
      "policy,op,path,submit_s,path_submit_s,complete_s,latency_ms,"
      "path_latency_ms,failovers\n";
  for (size_t i = 0; i < runs_.size(); ++i) {
    const absl::string_view policy = policy::PolicyName(policies_[i]);
    for (const IoTrace& t : runs_[i].rows) {
      const absl::string_view path =
          t.path >= 0 && static_cast<size_t>(t.path) < sc.paths.size()
              ? absl::string_view(sc.paths[t.path].name)
              : absl::string_view("?");
      absl::StrAppendFormat(
          &out, "%s,%s,%s,%.9f,%.9f,%.9f,%.6f,%.6f,%d\n", policy,
          kOpNames[t.op], path, static_cast<double>(t.submit_ns) / 1e9,
          static_cast<double>(t.path_submit_ns) / 1e9,
          static_cast<double>(t.complete_ns) / 1e9,
          static_cast<double>(t.complete_ns - t.submit_ns) / 1e6,
          static_cast<double>(t.complete_ns - t.path_submit_ns) / 1e6,
          t.failovers);
    }
  }
  return out;
}

uint64_t TraceRecorder::dropped() const {
  uint64_t n = 0;
  for (const Run& r : runs_) n += r.dropped;
  return n;
}

}  // namespace pathwise::lab

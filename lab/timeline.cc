// SPDX-License-Identifier: Apache-2.0
#include "lab/timeline.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "exporters/labels.h"  // the kernel's ANA spelling, which .scn takes

namespace pathwise::lab {
namespace {

std::string Duration(int64_t ns) {
  if (ns % kSec == 0) return absl::StrCat(ns / kSec, "s");
  if (ns % kMs == 0) return absl::StrCat(ns / kMs, "ms");
  if (ns % 1000 == 0) return absl::StrCat(ns / 1000, "us");
  return absl::StrCat(ns, "ns");
}

}  // namespace

std::string EventText(const Scenario& sc, const Event& e) {
  std::string out = absl::StrCat(sc.paths[e.path].name, " ");
  switch (e.kind) {
    case EventKind::kDelay:
      absl::StrAppend(&out, "delay ", Duration(e.delay_ns));
      break;
    case EventKind::kLoss:
      absl::StrAppend(&out, "loss ", absl::StrFormat("%g%%", e.loss * 100));
      break;
    case EventKind::kDown:
      absl::StrAppend(&out, "down");
      break;
    case EventKind::kUp:
      absl::StrAppend(&out, "up");
      break;
    case EventKind::kAna:
      absl::StrAppend(&out, "ana ", exporters::AnaStateLabel(e.ana));
      break;
  }
  return out;
}

std::vector<Phase> Phases(const Scenario& sc) {
  std::vector<Phase> out = {{0, sc.duration_ns, "start"}};
  std::vector<std::string> labels;
  for (size_t i = 0; i < sc.events.size(); ++i) {
    const Event& e = sc.events[i];
    if (e.at_ns <= 0 || e.at_ns >= sc.duration_ns) continue;
    if (e.at_ns != out.back().start_ns) {
      out.back().end_ns = e.at_ns;
      out.push_back({e.at_ns, sc.duration_ns, ""});
    }
    Phase& p = out.back();
    absl::StrAppend(&p.label, p.label.empty() ? "" : ", ", EventText(sc, e));
  }
  return out;
}

TimelineRecorder::TimelineRecorder(const Scenario& sc, size_t policies,
                                   int bins)
    : sc_(sc),
      phases_(Phases(sc)),
      bin_ns_(std::max<int64_t>(1, (sc.duration_ns + bins - 1) / bins)),
      runs_(policies) {
  const size_t n_bins = static_cast<size_t>(std::max(bins, 1));
  for (Run& r : runs_) {
    r.phases.resize(phases_.size() <= kMaxPhaseTables ? phases_.size() : 0);
    for (Acc& a : r.phases) a.path_ios.assign(sc.paths.size(), 0);
    r.bin_ios.assign(n_bins, 0);
    r.bin_hist.resize(n_bins);
  }
}

IoObserver TimelineRecorder::Observer(size_t i) {
  Run* run = &runs_[i];
  // Completions come in time order, so the phase only moves forward.
  return [this, run, phase = size_t{0}](const IoTrace& t) mutable {
    const uint64_t latency = static_cast<uint64_t>(t.complete_ns - t.submit_ns);
    if (!run->phases.empty()) {
      while (phase + 1 < run->phases.size() &&
             t.complete_ns >= phases_[phase + 1].start_ns) {
        ++phase;
      }
      Acc& a = run->phases[phase];
      ++a.ios[t.op];
      a.failovers += static_cast<uint64_t>(t.failovers);
      ++a.path_ios[t.path];
      a.hist[t.op].Observe(latency);
    }
    const size_t bin = std::min(static_cast<size_t>(t.complete_ns / bin_ns_),
                                run->bin_ios.size() - 1);
    ++run->bin_ios[bin];
    run->bin_hist[bin].Observe(latency);
  };
}

Timeline TimelineRecorder::Result(size_t i, const PolicyResult& whole) const {
  const Run& run = runs_[i];
  const double bs = sc_.workload.bs;
  Timeline tl;
  tl.bin_ns = bin_ns_;
  for (size_t p = 0; p < run.phases.size(); ++p) {
    const Acc& a = run.phases[p];
    const double secs =
        static_cast<double>(phases_[p].end_ns - phases_[p].start_ns) / 1e9;
    PolicyResult r;
    r.policy = whole.policy;
    r.path_ios = a.path_ios;
    r.failovers = a.failovers;
    for (int op = 0; op < 2; ++op) {
      OpResult& o = r.ops[op];
      o.ios = a.ios[op];
      o.bytes = a.ios[op] * sc_.workload.bs;
      o.mib_s = secs > 0 ? static_cast<double>(o.bytes) / secs / 1048576.0 : 0;
      o.iops = secs > 0 ? static_cast<double>(o.ios) / secs : 0;
      o.p50_ms = QuantileMs(a.hist[op], 0.5);
      o.p99_ms = QuantileMs(a.hist[op], 0.99);
      o.p999_ms = QuantileMs(a.hist[op], 0.999);
    }
    tl.phases.push_back(std::move(r));
  }
  for (size_t b = 0; b < run.bin_ios.size(); ++b) {
    // The last bin may be shorter than the others.
    const int64_t start = static_cast<int64_t>(b) * bin_ns_;
    const double secs =
        static_cast<double>(std::min(bin_ns_, sc_.duration_ns - start)) / 1e9;
    tl.mib_s.push_back(secs > 0 ? run.bin_ios[b] * bs / secs / 1048576.0 : 0);
    tl.p99_ms.push_back(
        run.bin_ios[b] == 0 ? -1 : QuantileMs(run.bin_hist[b], 0.99));
  }
  return tl;
}

}  // namespace pathwise::lab

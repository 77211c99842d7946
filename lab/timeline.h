// SPDX-License-Identifier: Apache-2.0
// A scenario run over time: its phases (the spans between scripted events:
// a delay step, a path going down or up, an ANA change, a loss step) and a
// fixed number of time bins, each with what every policy completed in it.
// `pathwise lab` reports a table per phase and draws the bins
// (lab/timeline_plot.h).
#ifndef PATHWISE_LAB_TIMELINE_H_
#define PATHWISE_LAB_TIMELINE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "lab/latency_histogram.h"
#include "lab/scenario.h"
#include "lab/sim.h"

namespace pathwise::lab {

struct Phase {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  // The events that start it ("p0 delay 30ms, p1 down"); "start" for the
  // first phase.
  std::string label;
};

// The scenario's phases: a new one at each distinct time of an event after
// 0 and before the end (events at 0 shape the whole run). One phase, the
// whole run, for a scenario without such events.
std::vector<Phase> Phases(const Scenario& sc);

// Beyond this many phases a run gets no table per phase (each costs two
// latency histograms per policy, and a scripted file may hold thousands of
// event times): the whole run's table says so, and --plot still marks them.
inline constexpr size_t kMaxPhaseTables = 16;

// One event as the scenario file spells it, without its time ("p0 down").
std::string EventText(const Scenario& sc, const Event& e);

// One policy's run over time.
struct Timeline {
  // One result per phase, as Simulate() gives for the whole run, of the
  // I/Os that completed in it (rates over the phase's length; failovers:
  // those of its I/Os); empty beyond kMaxPhaseTables phases.
  std::vector<PolicyResult> phases;
  // Per bin of bin_ns: MiB/s of all ops, and the p99 latency (ms) of the
  // bin's completions, negative when nothing completed.
  int64_t bin_ns = 0;
  std::vector<double> mib_s;
  std::vector<double> p99_ms;
};

class TimelineRecorder {
 public:
  TimelineRecorder(const Scenario& sc, size_t policies, int bins);

  // The observer for the run of the i-th policy; runs on several threads
  // need no lock (each has its own state).
  IoObserver Observer(size_t i);

  // The i-th policy's timeline; `whole` is its Simulate() result (the
  // policy and path count).
  Timeline Result(size_t i, const PolicyResult& whole) const;

  const std::vector<Phase>& phases() const { return phases_; }

 private:
  struct Acc {
    uint64_t ios[2] = {0, 0};
    uint64_t failovers = 0;
    std::vector<uint64_t> path_ios;
    LatencyHistogram hist[2];
  };
  struct Run {
    std::vector<Acc> phases;
    std::vector<uint64_t> bin_ios;
    std::vector<LatencyHistogram> bin_hist;
  };
  const Scenario& sc_;
  std::vector<Phase> phases_;
  int64_t bin_ns_;
  std::vector<Run> runs_;
};

}  // namespace pathwise::lab

#endif  // PATHWISE_LAB_TIMELINE_H_

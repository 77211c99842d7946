// SPDX-License-Identifier: Apache-2.0
// The scoring stage: runs after the topology and I/O sources and turns
// each window's I/O deltas into per-path latency EWMAs, weights, health and a
// per-subsystem iopolicy recommendation (scoring/, docs/scoring.md).
//
// It reads only what the earlier stages handed on (topology, path_io,
// path_nvme) and keeps the previous window's cumulative counters to take
// deltas: there is no second accounting of I/O. With the eBPF sampler the
// latency sums are exact nanoseconds; with the sysfs fallback they are the
// stat file's ticks (milliseconds, summed over the window's I/Os), and there
// are no failover or path-error counts.
#ifndef PATHWISE_SCORING_STAGE_H_
#define PATHWISE_SCORING_STAGE_H_

#include <array>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "model/topology.h"
#include "scoring/scoring.h"

namespace pathwise::scoring {

struct ScoringOptions {
  scoring::Config config;
  // The collection interval: one scoring window, and the unit of the
  // exported sample age.
  absl::Duration interval = absl::Seconds(1);
  // Whether the running kernel has the queue-depth iopolicy (Linux >= 6.11);
  // the advisor recommends round-robin instead where it has not.
  bool kernel_has_queue_depth = true;
};

// Whether a kernel release string ("6.12.0-1-amd64") is at least 6.11, the
// first with the queue-depth iopolicy. Unparseable: true.
bool KernelHasQueueDepth(absl::string_view release);

class ScoringStage {
 public:
  explicit ScoringStage(ScoringOptions options)
      : options_(std::move(options)) {}

  // Used as the `collector` label.
  absl::string_view name() const { return "scoring"; }

  using ControllerProbes =
      std::map<std::string, model::ControllerProbeStats, std::less<>>;

  // Scores one window: `path_io` and `path_nvme` are cumulative, keyed by
  // path name; `controller_probe` (cumulative, by controller name; empty
  // with probes off) gives an op group without I/O in the window its
  // controller's probe latency as its sample, and makes the paths of an
  // unreachable controller unusable (docs/scoring.md). The first window has
  // no deltas yet: every path gets its usability, equal weights and no
  // EWMA.
  model::Scoring Score(
      const model::Topology& topo,
      const std::map<std::string, model::IoStats, std::less<>>& path_io,
      const std::map<std::string, model::PathNvmeStats, std::less<>>& path_nvme,
      const ControllerProbes& controller_probe = {});

 private:
  // A path's cumulative counters at the end of the previous window.
  struct Counters {
    std::array<scoring::OpSample, model::kOpGroupCount> ops;
    uint64_t failovers = 0;
    uint64_t path_errors = 0;
  };

  using PathIo = std::map<std::string, model::IoStats, std::less<>>;
  using PathNvme = std::map<std::string, model::PathNvmeStats, std::less<>>;
  using Windows =
      std::map<std::string, std::vector<scoring::PathWindow>, std::less<>>;

  // A controller's probes in one window.
  struct ProbeWindow {
    OpSample sample;           // successful probes and their latency sum
    bool unreachable = false;  // failing now or in this window
  };
  // A controller's cumulative probe counters at the end of a window.
  struct ProbeCounters {
    OpSample sample;
    uint64_t unreachable_failures = 0;
  };

  // This window's per-path deltas of the cumulative counters, by head;
  // remembers the counters for the next window.
  Windows TakeWindows(
      const model::Topology& topo, const PathIo& path_io,
      const PathNvme& path_nvme,
      const std::map<std::string, ProbeWindow, std::less<>>& probes);
  // This window's probes by controller; remembers the counters.
  std::map<std::string, ProbeWindow, std::less<>> TakeProbeWindows(
      const ControllerProbes& controller_probe);
  // Feeds each head's scorer (forgetting heads that vanished) and fills
  // out.paths and out.heads.
  void ScoreHeads(const Windows& windows, model::Scoring& out);
  // The advisor's iopolicy per subsystem, into out.iopolicy_recommended.
  void AdviseSubsystems(const model::Topology& topo, model::Scoring& out) const;

  ScoringOptions options_;
  std::map<std::string, scoring::HeadScorer, std::less<>> heads_;
  std::map<std::string, Counters, std::less<>> previous_;  // by path name
  // By controller name.
  std::map<std::string, ProbeCounters, std::less<>> previous_probe_;
};

}  // namespace pathwise::scoring

#endif  // PATHWISE_SCORING_STAGE_H_

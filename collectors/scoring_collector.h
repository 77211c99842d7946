// The scoring stage: runs after the topology and I/O collectors and turns
// each window's I/O deltas into per-path latency EWMAs, weights, health and a
// per-subsystem iopolicy recommendation (scoring/, docs/scoring.md).
//
// It reads only what the earlier collectors put in the same snapshot
// (topology, path_io, path_nvme) and keeps the previous window's cumulative
// counters to take deltas: there is no second accounting of I/O. With the
// eBPF sampler the latency sums are exact nanoseconds; with the sysfs
// fallback they are the stat file's ticks (milliseconds, summed over the
// window's I/Os), and there are no failover or path-error counts.
#ifndef PATHWISE_COLLECTORS_SCORING_COLLECTOR_H_
#define PATHWISE_COLLECTORS_SCORING_COLLECTOR_H_

#include <array>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "collectors/collector.h"
#include "scoring/scoring.h"

namespace pathwise::collectors {

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

class ScoringCollector : public Collector {
 public:
  explicit ScoringCollector(ScoringOptions options)
      : options_(std::move(options)) {}

  absl::string_view name() const override { return "scoring"; }

  // Fills snapshot.scoring. The first window has no deltas yet: every path
  // gets its usability, equal weights and no EWMA.
  absl::Status Collect(model::Snapshot& snapshot) override;

 private:
  // A path's cumulative counters at the end of the previous window.
  struct Counters {
    std::array<scoring::OpSample, scoring::kOpGroups> ops;
    uint64_t failovers = 0;
    uint64_t path_errors = 0;
  };

  ScoringOptions options_;
  std::map<std::string, scoring::HeadScorer, std::less<>> heads_;
  std::map<std::string, Counters, std::less<>> previous_;  // by path name
};

}  // namespace pathwise::collectors

#endif  // PATHWISE_COLLECTORS_SCORING_COLLECTOR_H_

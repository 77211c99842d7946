// SPDX-License-Identifier: Apache-2.0
// Rates over the window between two snapshots: what a client holding two
// snapshots (a terminal view, a test) computes per device and op: IOPS,
// bytes/s, mean latency and, where the BPF sampler filled histograms,
// latency quantiles of the window alone.
#ifndef PATHWISE_MODEL_DELTA_H_
#define PATHWISE_MODEL_DELTA_H_

#include <array>
#include <map>
#include <optional>
#include <string>

#include "model/histogram.h"
#include "model/topology.h"
#include "model/types.h"

namespace pathwise::model {

// `now` minus `earlier`, two snapshots of the same cumulative statistics.
// A counter that went backwards (the source restarted, the device was
// re-created) contributes 0, as in Prometheus' rate() over a reset-free
// window; errors and latency are set when `now` has them.
OpStats Delta(const OpStats& now, const OpStats& earlier);

// One op's rates over a window of `seconds`.
struct OpRates {
  uint64_t completed = 0;  // I/Os completed in the window
  double iops = 0;
  double bytes_per_second = 0;
  // time_ns / completed over the window; nullopt without I/O.
  std::optional<double> mean_latency_seconds;
  // The window's latency histogram (BPF sampler only).
  std::optional<LatencyHistogram> latency;

  // The q-quantile of the window's latency in seconds (histogram_quantile
  // semantics); NaN without a histogram or without I/O.
  double LatencyQuantile(double q) const;
};

OpRates RatesOf(const OpStats& window, double seconds);

struct IoRates {
  std::array<std::optional<OpRates>, kOpCount> ops;  // nullopt: not reported
  const std::optional<OpRates>& op(Op o) const { return ops[Index(o)]; }
};

// Rates of every op `now` reports; an op absent from `earlier` counts from
// zero.
IoRates RatesBetween(const IoStats& earlier, const IoStats& now,
                     double seconds);

// Rates of every path, head and other device present in `now`.
struct SnapshotRates {
  double seconds = 0;  // now.collected_at - earlier.collected_at
  std::map<std::string, IoRates, std::less<>> paths;
  std::map<std::string, IoRates, std::less<>> heads;
  std::map<std::string, IoRates, std::less<>> devices;
};

// nullopt unless `now` was collected after `earlier`.
std::optional<SnapshotRates> RatesBetween(const Snapshot& earlier,
                                          const Snapshot& now);

}  // namespace pathwise::model

#endif  // PATHWISE_MODEL_DELTA_H_

// SPDX-License-Identifier: Apache-2.0
// The lab's latency histogram, what `pathwise lab` reports p50/p99/p999
// from: the model's histogram type with a finer layout than the kernel's
// (64 buckets per octave, < 1.6 % relative width, 128 ns to 1100 s), since
// the simulator pays nothing per bucket and its quantiles are compared
// between policies.
#ifndef PATHWISE_LAB_LATENCY_HISTOGRAM_H_
#define PATHWISE_LAB_LATENCY_HISTOGRAM_H_

#include <cstdint>

#include "model/histogram.h"

namespace pathwise::lab {

using LatencyHistogram =
    model::BasicLatencyHistogram<model::LogLinearLayout<6, 7, 40>>;

// The q-quantile in milliseconds; 0 when nothing was observed (an op the
// workload does not issue).
inline double QuantileMs(const LatencyHistogram& h, double q) {
  return h.Count() == 0 ? 0 : h.Quantile(q) * 1e3;
}

}  // namespace pathwise::lab

#endif  // PATHWISE_LAB_LATENCY_HISTOGRAM_H_

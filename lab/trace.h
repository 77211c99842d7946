// SPDX-License-Identifier: Apache-2.0
// `pathwise lab --trace FILE`: every completed I/O of a scenario's run under
// each policy, as CSV, to see where a policy's time went: which path held
// the slow I/Os, when they were sent there, and whether they failed over.
#ifndef PATHWISE_LAB_TRACE_H_
#define PATHWISE_LAB_TRACE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "lab/scenario.h"
#include "lab/sim.h"
#include "policy/policy.h"

namespace pathwise::lab {

class TraceRecorder {
 public:
  // Keeps at most `max_rows` completions of each policy (the first ones in
  // simulated time) and counts the rest: a long deep run has tens of
  // millions.
  TraceRecorder(std::vector<policy::Policy> policies, size_t max_rows);

  // The observer for the run of policies[i]. Each run has its own rows, so
  // runs on several threads need no lock.
  IoObserver Observer(size_t i);

  // A header, then every kept row, policy by policy in the given order:
  // policy,op,path,submit_s,path_submit_s,complete_s,latency_ms,
  // path_latency_ms,failovers (times in simulated seconds from the start).
  std::string Csv(const Scenario& sc) const;

  // Completions not kept, over all policies.
  uint64_t dropped() const;

 private:
  struct Run {
    std::vector<IoTrace> rows;
    uint64_t dropped = 0;
  };
  std::vector<policy::Policy> policies_;
  size_t max_rows_;
  std::vector<Run> runs_;
};

}  // namespace pathwise::lab

#endif  // PATHWISE_LAB_TRACE_H_

// SPDX-License-Identifier: Apache-2.0
// Synthetic snapshots for tests and benchmarks: a deterministic topology of
// any size, shaped like a real fabric (controllers shared by all heads of a
// subsystem, one path per head per controller).
#ifndef PATHWISE_MODEL_SYNTHETIC_H_
#define PATHWISE_MODEL_SYNTHETIC_H_

#include "model/topology.h"

namespace pathwise::model {

struct SyntheticShape {
  int subsystems = 1;
  int heads_per_subsystem = 1;
  int controllers_per_subsystem = 2;  // = paths per head
  // As the eBPF sampler reports: a latency histogram and an error count per
  // op; reads, writes and flushes spread over ~40 of the kernel's buckets
  // (a factor 32 each way around the median), discards with no I/O at all.
  // Off: sysfs counters only.
  bool bpf = false;
};

// Paths = subsystems × heads × controllers. I/O counters are deterministic
// functions of the indices; collector results are fixed (durations 0).
Snapshot MakeSyntheticSnapshot(const SyntheticShape& shape);

}  // namespace pathwise::model

#endif  // PATHWISE_MODEL_SYNTHETIC_H_

// SPDX-License-Identifier: Apache-2.0
// Summing per-CPU map values: a sum that would pass 2^64-1 stops there and
// is counted, so a counter the kernel side let wrap is reported as
// saturated instead of as a small number.
#ifndef PATHWISE_BPF_SATURATING_H_
#define PATHWISE_BPF_SATURATING_H_

#include <cstdint>

namespace pathwise::bpf {

// Adds b to a, stopping at 2^64-1 instead of wrapping; counts each stop.
inline void SatAdd(uint64_t& a, uint64_t b, uint64_t& saturated) {
  if (a > UINT64_MAX - b) {
    a = UINT64_MAX;
    ++saturated;
  } else {
    a += b;
  }
}

}  // namespace pathwise::bpf

#endif  // PATHWISE_BPF_SATURATING_H_

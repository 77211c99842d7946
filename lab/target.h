// SPDX-License-Identifier: Apache-2.0
// The far end of a path: the link to the target (serialization, one link per
// direction, each at its own rate) and the target's servers (a FIFO queue in
// front of `parallelism` servers that each take `service`, or
// `write_service` for a write). lab/README.md describes the model.
#ifndef PATHWISE_LAB_TARGET_H_
#define PATHWISE_LAB_TARGET_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/base/attributes.h"
#include "lab/scenario.h"

namespace pathwise::lab {

class Target {
 public:
  // Every I/O is `bs` bytes.
  Target(const PathSpec& spec, uint32_t bs);

  // An I/O issued at `t` (a read when `read`): returns when the target has
  // served it, after the link and any queue at the servers.
  ABSL_ATTRIBUTE_ALWAYS_INLINE int64_t Serve(int64_t t, bool read) {
    // Reads' data uses target->host, writes' host->target.
    if (const int64_t ser = ser_ns_[read ? 1 : 0]; ser > 0) {
      int64_t& free = link_free_[read ? 1 : 0];
      free = std::max(t, free) + ser;
      t = free;
    }
    if (!ring_.empty()) {  // FIFO multi-server target
      int64_t& slot = ring_[ring_head_];
      slot = std::max(t, slot) + service_ns_[read ? 0 : 1];
      t = slot;
      if (++ring_head_ == ring_.size()) ring_head_ = 0;
    } else {
      t += service_ns_[read ? 0 : 1];
    }
    return t;
  }

 private:
  int64_t service_ns_[2];          // read, write
  int64_t ser_ns_[2];              // per I/O, as link_free_; 0: unlimited
  int64_t link_free_[2] = {0, 0};  // host->target, target->host
  std::vector<int64_t> ring_;      // finish times of the servers
  size_t ring_head_ = 0;
};

}  // namespace pathwise::lab

#endif  // PATHWISE_LAB_TARGET_H_

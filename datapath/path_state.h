// SPDX-License-Identifier: Apache-2.0
// The state of a namespace's paths that every queue of the datapath reads:
// whether each path may take I/O, as the one seam where failure handling
// (failover.h), the paths' ANA states and, later, anything else that knows
// about a path (controller state, an operator) meet. Queues check
// generation() on their hot path and rebuild their selector's view only when
// it moved.
//
// A path takes I/O when it has not failed, its ANA state allows I/O and no
// ANA status is waiting for a re-read of its state; optimized paths are
// preferred (policy::PathInfo, the kernel's rule). Until an ANA log reader
// calls SetAnaState, every path is kUnknown, which counts as optimized.
#ifndef PATHWISE_DATAPATH_PATH_STATE_H_
#define PATHWISE_DATAPATH_PATH_STATE_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "datapath/failover.h"
#include "datapath/ublk/backend.h"
#include "model/histogram.h"
#include "model/topology.h"
#include "model/types.h"
#include "policy/selector.h"

namespace pathwise::datapath {

// The model's op of a block request (Write Zeroes is kOther, as the eBPF
// sampler counts REQ_OP_WRITE_ZEROES).
model::Op ModelOpOf(ublk::IoOp op);

// What one path did, summed over the queues.
struct PathStats {
  uint64_t ios = 0;         // completed successfully on this path
  uint64_t bytes = 0;       // moved by those (reads and writes)
  uint64_t errors = 0;      // completions that were not a success
  uint64_t failovers = 0;   // I/Os that left this path for another
  uint64_t selections = 0;  // times the selector chose this path
  uint64_t timeouts = 0;    // I/Os out longer than the I/O timeout
  uint64_t probes = 0;      // probe commands sent while failed
  uint64_t probe_failures = 0;
  // Writes cut off here by a path failure, held for the write fence
  // before another path took them (or before they failed, out of
  // attempts).
  uint64_t fenced_writes = 0;
  // Errors by NVMe status class (model::kNvmeErrorClasses order).
  std::array<uint64_t, model::kNvmeErrorClassCount> errors_by_class{};
  uint64_t transport_errors = 0;    // -errno completions
  model::LatencyHistogram latency;  // successful I/Os, submission to CQE
  // The successful I/Os again, by op (model::Index(op)): count, bytes,
  // summed latency and its histogram, what the exporters publish per op
  // (datapath/exposition.h). Flush and Discard move no bytes; Write Zeroes
  // is kOther, as the eBPF sampler counts it.
  std::array<model::OpStats, model::kOpCount> by_op{};

  // Counts one successful I/O of `op` in by_op.
  void RecordOp(model::Op op, uint64_t op_bytes, int64_t latency_ns);
  void Merge(const PathStats& o);
};

struct DatapathStats {
  std::vector<PathStats> paths;
  uint64_t requests = 0;          // block requests completed
  uint64_t failed_requests = 0;   // completed with an error
  uint64_t no_path_waits = 0;     // requests that waited for a usable path
  uint64_t no_path_timeouts = 0;  // ... and failed with EIO after the wait

  void Merge(const DatapathStats& o);
};

// A path's state as a view (PathStates::Get).
struct PathStatus {
  bool failed = false;
  bool probing = false;
  model::AnaState ana = model::AnaState::kUnknown;
  bool ana_pending = false;  // an ANA status came back; state not re-read
  bool usable() const {
    return !failed && !ana_pending && model::AnaAllowsIo(ana);
  }
};

class PathStates {
 public:
  PathStates(int paths, const RetryPolicy& retry);

  int size() const { return static_cast<int>(health_.size()); }
  // Moves whenever any path's usability or ANA state changes.
  uint64_t generation() const {
    return generation_.load(std::memory_order_acquire);
  }
  PathStatus Get(int path) const;
  // The selector's view of every path, in path order.
  std::vector<policy::PathInfo> Infos() const;
  bool AnyUsable() const;

  // The ANA seam. The ANA log reader sets each path's state after every
  // read of its controller's page that lists the namespace; that also ends
  // a pending re-read (OnAnaError).
  void SetAnaState(int path, model::AnaState state);
  // Called once, before the device starts: `handler(path)` runs on a queue
  // thread when a command on `path` returns an ANA status, and asks for a
  // re-read of the path's ANA state (it must not block).
  void SetAnaErrorHandler(std::function<void(int path)> handler) {
    on_ana_error_ = std::move(handler);
  }
  // A command on `path` returned an ANA status: its ANA state is stale.
  // Like the kernel's NVME_NS_ANA_PENDING, the path takes no I/O until the
  // state is read again, and the handler is asked for that read. Without a
  // handler nothing would read it: the path is failed instead, and probes
  // bring it back.
  void OnAnaError(int path, int64_t now_ns);
  // The re-read after an ANA status told nothing (the read failed, or the
  // page does not list the namespace): the path is failed, for probes to
  // bring back, rather than left out of use with nothing to end it. No
  // change when no re-read was pending (a periodic read that failed keeps
  // the state last read).
  void OnAnaReadFailed(int path, int64_t now_ns);

  // Failure handling (failover.h's PathHealth per path).
  void OnFailure(int path, int64_t now_ns);
  // Claims the probe of `path` if one is due: exactly one caller gets true
  // and must call OnProbeResult.
  bool ClaimProbe(int path, int64_t now_ns);
  void OnProbeResult(int path, bool ok, int64_t now_ns);
  // Whether some path is failed (queues keep a timer running for probes).
  bool AnyFailed() const {
    return failed_count_.load(std::memory_order_acquire) > 0;
  }

 private:
  bool UsableLocked(size_t path) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FailLocked(int path, int64_t now_ns) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Bump() { generation_.fetch_add(1, std::memory_order_acq_rel); }

  mutable absl::Mutex mu_;
  std::vector<PathHealth> health_ ABSL_GUARDED_BY(mu_);
  std::vector<model::AnaState> ana_ ABSL_GUARDED_BY(mu_);
  std::vector<bool> ana_pending_ ABSL_GUARDED_BY(mu_);
  std::atomic<uint64_t> generation_{1};
  std::atomic<int> failed_count_{0};
  std::function<void(int)> on_ana_error_;
};

}  // namespace pathwise::datapath

#endif  // PATHWISE_DATAPATH_PATH_STATE_H_

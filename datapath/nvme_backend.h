// SPDX-License-Identifier: Apache-2.0
// The userspace multipath datapath as a ublk Backend: every block request
// becomes one NVMe I/O command (Read, Write, Flush, Write Zeroes, Dataset
// Management/Deallocate) sent by io_uring passthru (NVME_URING_CMD_IO) to
// one path's generic char device /dev/ngXnY, on the ublk queue's own ring
// (SQE128/CQE32). The ng devices are registered files of each queue's ring.
//
// One policy::Selector for the device (the same classes `pathwise lab`
// runs; SharedSelector), fed with every queue's exact per-I/O latencies
// and in-flight counts. Per queue: failover
// per failover.h; a timer on the ring for I/O timeouts, the no-path wait,
// probes of failed paths and the selector's ticks. Paths are shared by all
// queues through PathStates, the seam for ANA and other path state.
//
// The device's largest request is the smallest max_hw_sectors_kb of the
// paths (their MDTS and driver limits), so the block layer splits before
// ublk and no command is ever split here.
#ifndef PATHWISE_DATAPATH_NVME_BACKEND_H_
#define PATHWISE_DATAPATH_NVME_BACKEND_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "datapath/failover.h"
#include "datapath/namespaces.h"
#include "datapath/path_state.h"
#include "datapath/shared_selector.h"
#include "datapath/ublk/backend.h"
#include "nvme/status.h"
#include "policy/policy.h"

namespace pathwise::datapath {

struct BackendOptions {
  policy::Policy policy = policy::Policy::kPathwise;
  SeededDefect defect = SeededDefect::kNone;
  policy::PolicyParams params;
  // With no usable path, a request waits this long for one, then fails
  // with EIO.
  absl::Duration no_path_timeout = absl::Seconds(30);
  // A command out longer than this marks its path failed: no new I/O goes
  // there. The command itself is resubmitted elsewhere once the kernel
  // ends it (nvme_core.io_timeout aborts it): resubmitting while it may
  // still run would let a late write overwrite newer data, or a late read
  // land in a buffer that serves another request by then.
  absl::Duration io_timeout = absl::Seconds(10);
  RetryPolicy retry;
  // Where the ng devices are (tests point this elsewhere).
  std::string dev_dir = "/dev";
  // Cap on the largest request (each ublk tag has a buffer of this size).
  uint32_t max_io_bytes_cap = 1024 * 1024;
  // Monotonic nanoseconds; empty: CLOCK_MONOTONIC (tests pass a fake).
  std::function<int64_t()> clock;
};

// The device's geometry and largest request for `group` (pure): size and
// block sizes of the first path, the smallest limits of all, discard and
// write zeroes where every path has them.
struct GroupLimits {
  ublk::Geometry geometry;
  uint32_t max_io_bytes = 0;
};
absl::StatusOr<GroupLimits> LimitsOf(const NamespaceGroup& group,
                                     uint32_t max_io_bytes_cap);

class NvmeBackend final : public ublk::Backend {
 public:
  // Opens every path's /dev/ngXnY (read-write) and asks each for its nsid
  // (NVME_IOCTL_ID).
  static absl::StatusOr<std::unique_ptr<NvmeBackend>> Open(
      const NamespaceGroup& group, const BackendOptions& options);
  ~NvmeBackend() override;

  ublk::Geometry geometry() const override { return limits_.geometry; }
  ublk::RingNeeds ring_needs() const override;
  absl::StatusOr<std::unique_ptr<ublk::QueueBackend>> AttachQueue(
      ublk::QueueContext& context) override;

  uint32_t max_io_bytes() const { return limits_.max_io_bytes; }
  const NamespaceGroup& group() const { return group_; }
  // The paths' shared state: failure handling writes it, an ANA reader
  // may set ANA states (PathStates::SetAnaState).
  PathStates& paths() { return paths_; }
  // The one selector every queue asks (shared_selector.h).
  SharedSelector& selector() { return selector_; }
  const SharedSelector& selector() const { return selector_; }
  // Counters summed over the queues, at most one queue tick (100 ms)
  // behind while I/O runs; exact once the device is stopped.
  DatapathStats Stats() const;

  // Each path's controller's Command Retry Delay Times (Identify
  // Controller), in path order; set before the device starts (the queues
  // read them unlocked). Until then, and for a path left out, no delay.
  void SetRetryDelayTimes(std::vector<nvme::RetryDelayTimes> times) {
    retry_delay_times_ = std::move(times);
  }
  // How long an I/O that failed on `path` with Command Retry Delay `crd`
  // (Disposition::crd) waits before it goes out again: the controller's
  // CRDT, at most RetryPolicy::max_retry_delay_ns; 0 for none.
  int64_t RetryDelayNs(int path, uint8_t crd) const;
  // Each path's write fence (failover.h, WriteFenceNs), in path order; set
  // before the device starts. Until then, and for a path left out, none.
  void SetWriteFences(std::vector<int64_t> fences_ns) {
    write_fences_ns_ = std::move(fences_ns);
  }
  int64_t WriteFenceNs(int path) const {
    return static_cast<size_t>(path) < write_fences_ns_.size()
               ? write_fences_ns_[path]
               : 0;
  }

  // For the queues.
  const BackendOptions& options() const { return options_; }
  const std::vector<int>& fds() const { return fds_; }
  uint32_t nsid(int path) const { return nsids_[path]; }
  int64_t Now() const;
  // A queue's counters, published from its thread.
  void Publish(int queue, const DatapathStats& stats);

 private:
  NvmeBackend(const NamespaceGroup& group, const BackendOptions& options,
              const GroupLimits& limits);

  const NamespaceGroup group_;
  const BackendOptions options_;
  const GroupLimits limits_;
  std::vector<int> fds_;
  std::vector<uint32_t> nsids_;
  std::vector<nvme::RetryDelayTimes> retry_delay_times_;
  std::vector<int64_t> write_fences_ns_;
  PathStates paths_;
  SharedSelector selector_;
  mutable absl::Mutex mu_;
  std::vector<DatapathStats> published_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pathwise::datapath

#endif  // PATHWISE_DATAPATH_NVME_BACKEND_H_

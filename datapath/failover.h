// SPDX-License-Identifier: Apache-2.0
// What the datapath does with one NVMe passthru completion, and when a
// failed path is tried again: pure decisions, no I/O and no clock.
//
// The rule is the kernel's (nvme_decide_disposition() with REQ_NVME_MPATH),
// as nvme::ClassifyForRetry states it: a path-related status or a transport
// error goes to another path; an ANA status goes to another path too, but
// the path is not failed: its ANA state, re-read, decides; any other NVMe
// status without Do Not Retry is sent again on the same path; Do Not Retry,
// and the errnos that describe the command itself, reach the application.
#ifndef PATHWISE_DATAPATH_FAILOVER_H_
#define PATHWISE_DATAPATH_FAILOVER_H_

#include <cstdint>

#include "model/types.h"

namespace pathwise::datapath {

struct Disposition {
  enum class Kind : uint8_t {
    kComplete,  // success: complete with `result`
    kFailover,  // resubmit on another usable path
    // Resubmit on the same path while it is usable (another one otherwise):
    // the controller answered, or the host was short of resources.
    kRetry,
    kFail,  // complete with `result` (-errno)
  };
  Kind kind = Kind::kComplete;
  // kComplete: bytes (reads and writes) or 0; kFail: -errno; kFailover and
  // kRetry: the -errno the I/O completes with when its attempts run out.
  int32_t result = 0;
  // kFailover: the path is to be marked failed (re-checked by probes).
  bool path_failed = false;
  // kFailover: an ANA status. The path is not failed: its ANA state is
  // stale, and the log page re-read says whether it may take I/O.
  bool ana_error = false;
  // The NVMe status class, or kSuccess for an errno result.
  model::NvmeStatusClass status_class = model::NvmeStatusClass::kSuccess;
  // kFailover and kRetry: the status's Command Retry Delay field, which of
  // the controller's CRDT1..3 to wait before the I/O goes out again (1..3;
  // 0 none). nvme::RetryDelayNs turns it into time.
  uint8_t crd = 0;
};

// `res` is the passthru CQE's res (0 success, > 0 NVMe status, < 0
// -errno); `success_result` is what a success completes the request with.
Disposition DecideCompletion(int32_t res, int32_t success_result);

// The -errno an application sees for an NVMe status it is given (the
// kernel's nvme_error_status(), in the few cases that are not -EIO).
int32_t ErrnoForStatus(uint16_t status);

// Whether an I/O that ended as `d` may still be executed by the path's
// controller: the command was cut off by the host (a transport error, the
// kernel's cancellation at its timeout or reset, a path-related status)
// rather than answered. A write, Write Zeroes or Deallocate cut off that
// way must not go to another path at once: the old path may still carry
// it to the media after a newer write through the other path has been
// acknowledged (a ghost write). An answered command (any status from the
// controller, ANA included) or one the host never sent (-EAGAIN) is safe.
bool CutOffByPathFailure(const Disposition& d);

// How long a write cut off by a path failure waits before another path
// may take it (the write fence). A fabrics controller that lost its host
// stops executing commands once its keep-alive timeout (KATO) expires and
// its Command Quiesce Time (CQT) has passed: the kernel's delayed
// failover waits the same. A PCIe controller's reset ends every command
// it held, so only CQT applies there. `kato_ns` < 0: unknown, the
// fabrics default of 5 s (NVME_DEFAULT_KATO) is assumed.
int64_t WriteFenceNs(bool fabrics, int64_t kato_ns, uint16_t cqt_ms);

// How long `--recover` holds a dead server's device before taking it back,
// for one path: the dead server's commands cannot be cancelled (NVMe
// passthru has no io_uring cancellation), so one still out on a stalled
// path lives until the kernel ends it at its queue's timeout, and may be
// executed up to the write fence after that. `timeout_ns` < 0: unknown,
// the kernel's default of 30 s (NVME_IO_TIMEOUT) is assumed.
int64_t RecoveryHoldNs(int64_t timeout_ns, int64_t fence_ns);

// Defects the datapath can be started with, so that the data checks can be
// shown to catch them (the fault tests run the ledger against each and
// expect it to fail); never for real use, hence a hidden flag.
enum class SeededDefect : uint8_t {
  kNone,
  // A write is acknowledged when its command is sent, not when it
  // completes (and its buffer goes back to the kernel at once).
  kAckBeforeCompletion,
  // A command out longer than --io-timeout is sent to another path at
  // once, while the first path may still execute it.
  kRetryTimedOutAtOnce,
};

// How often an I/O is resubmitted before it fails with EIO, and how long a
// failed path rests before it is probed.
struct RetryPolicy {
  // Submissions of one I/O (the first included) that ended in kFailover
  // or kRetry before it fails with EIO.
  int max_attempts = 8;
  int64_t backoff_initial_ns = 100'000'000;  // 100 ms
  int64_t backoff_max_ns = 5'000'000'000;    // 5 s
  // The most a Command Retry Delay holds one resubmission back: a
  // controller's CRDT reaches 6553 s, and an I/O that waits that long
  // while another path could serve it is an outage to the application.
  int64_t max_retry_delay_ns = 5'000'000'000;  // 5 s
};

// A path's failure state: usable until a failure; then failed, probed once
// its back-off has passed, usable again when a probe succeeds, and each
// failed probe doubles the back-off (up to the policy's maximum). Not
// thread-safe (PathStates serialises it).
class PathHealth {
 public:
  explicit PathHealth(const RetryPolicy& policy = {}) : policy_(policy) {}

  bool failed() const { return failed_; }
  bool probing() const { return probing_; }
  int64_t retry_at_ns() const { return retry_at_ns_; }
  int64_t backoff_ns() const { return backoff_ns_; }

  // An I/O failed on the path. Returns whether the path was usable until
  // now (a state change).
  bool OnFailure(int64_t now_ns);
  // Whether a probe is due: failed, none out, the back-off passed.
  bool ProbeDue(int64_t now_ns) const {
    return failed_ && !probing_ && now_ns >= retry_at_ns_;
  }
  void OnProbeStart() { probing_ = true; }
  // Returns whether the path became usable.
  bool OnProbeResult(bool ok, int64_t now_ns);

 private:
  RetryPolicy policy_;
  bool failed_ = false;
  bool probing_ = false;
  int64_t retry_at_ns_ = 0;
  int64_t backoff_ns_ = 0;
};

}  // namespace pathwise::datapath

#endif  // PATHWISE_DATAPATH_FAILOVER_H_

// SPDX-License-Identifier: Apache-2.0
// Keeps PathStates' ANA states current with native multipath off, when the
// kernel reads no ANA log page itself: each path's controller page
// (/dev/nvmeX, admin Get Log Page through passthru) is read at start,
// whenever a command returns an ANA status (PathStates' handler), and
// periodically, on a thread of its own so that no queue thread waits on an
// admin command. Each read sets the path's state from the group that lists
// its namespace (nvme::StateOf); selection then follows the kernel's rule
// (policy::PathInfo).
//
// A controller that does not report ANA keeps its paths optimized and is
// not read again. A read that fails keeps the state last read; when it was
// the re-read after an ANA status, the path is failed instead and probes
// bring it back (PathStates::OnAnaReadFailed).
#ifndef PATHWISE_DATAPATH_ANA_MONITOR_H_
#define PATHWISE_DATAPATH_ANA_MONITOR_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "datapath/namespaces.h"
#include "datapath/path_state.h"
#include "nvme/ana_log.h"
#include "nvme/status.h"
#include "nvme/uring.h"

namespace pathwise::datapath {

// Where the pages come from: the seam tests fake. Called from one thread
// at a time.
class AnaSource {
 public:
  virtual ~AnaSource() = default;
  // The ANA log page of path `path`'s controller. FailedPrecondition when
  // the controller does not report ANA.
  virtual absl::StatusOr<nvme::AnaLog> Read(int path) = 0;
};

// The real source: every path's controller char device, opened read-only
// (Get Log Page needs CAP_SYS_ADMIN, not write access), read through one
// nvme::AdminRing (nvme/ana_read.h). A read that timed out leaves its
// command on the ring, so the next read makes a new ring.
class ControllerAnaSource final : public AnaSource {
 public:
  // `dev_dir`/<controller> for every path of `group`. A device that cannot
  // be opened is not an error here: its reads return the open error.
  ControllerAnaSource(const NamespaceGroup& group, const std::string& dev_dir,
                      absl::Duration timeout);
  ~ControllerAnaSource() override;
  absl::StatusOr<nvme::AnaLog> Read(int path) override;
  // The Command Retry Delay Times of path `path`'s controller (Identify
  // Controller on the same device and ring), which the datapath reads once
  // at start.
  absl::StatusOr<nvme::RetryDelayTimes> ReadRetryDelayTimes(int path);

 private:
  // The ring, made anew after a command on it timed out.
  absl::StatusOr<nvme::AdminRing*> Ring();

  std::vector<int> fds_;
  std::vector<absl::Status> open_errors_;
  absl::Duration timeout_;
  std::unique_ptr<nvme::AdminRing> ring_;
};

struct AnaMonitorOptions {
  // How often every path's page is read with nothing asking for it.
  absl::Duration interval = absl::Seconds(10);
  // A path in ANA transition (change) is read again this soon: it becomes
  // usable or not within the controller's ANATT, and I/O should not wait
  // a whole interval for it.
  absl::Duration change_interval = absl::Seconds(1);
  // One line ("path nvme0n1: ANA inaccessible (group 1)") per state change
  // and per new read error; empty: none.
  std::function<void(const std::string&)> log;
  // The clock PathStates' back-off runs on (NvmeBackend::Now), monotonic
  // nanoseconds; empty: CLOCK_MONOTONIC.
  std::function<int64_t()> clock;
};

class AnaMonitor {
 public:
  // `nsids[i]` and `names[i]` are path i's namespace id on its controller
  // and its name for the log lines. `paths` and `source` outlive the
  // monitor.
  AnaMonitor(PathStates& paths, std::vector<uint32_t> nsids,
             std::vector<std::string> names, AnaSource& source,
             AnaMonitorOptions options);
  // Stops the thread.
  ~AnaMonitor();
  AnaMonitor(const AnaMonitor&) = delete;
  AnaMonitor& operator=(const AnaMonitor&) = delete;

  // Reads every path once on the calling thread, installs the ANA error
  // handler on `paths`, and starts the thread that does the rest.
  void Start();
  // Ends the thread (after the read in progress, if any). The handler
  // stays installed but only records requests: stop the queues first.
  void Stop();

  // Asks for a read of `path` soon (any thread; never blocks on a read).
  void Request(int path);
  // Reads every path that is requested or due at `now`, on the calling
  // thread; returns when the next periodic read is due. The thread's one
  // turn, and what tests drive.
  absl::Time ReadDue(absl::Time now);

  // Reads since start, for tests and the summary.
  uint64_t reads() const { return reads_.load(std::memory_order_relaxed); }

 private:
  void ReadPath(int path, absl::Time now);
  void Log(const std::string& line) const;
  int64_t NowNs() const;
  void Loop();
  bool Woken() const ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return stopping_ || any_requested_;
  }

  PathStates& paths_;
  const std::vector<uint32_t> nsids_;
  const std::vector<std::string> names_;
  AnaSource& source_;
  const AnaMonitorOptions options_;

  // The reading thread's own (or the caller's of ReadDue, one at a time).
  std::vector<absl::Time> next_read_;
  std::vector<bool> no_ana_;  // the controller does not report ANA
  std::vector<std::string> last_error_;
  std::atomic<uint64_t> reads_{0};

  absl::Mutex mu_;
  std::vector<bool> requested_ ABSL_GUARDED_BY(mu_);
  bool any_requested_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace pathwise::datapath

#endif  // PATHWISE_DATAPATH_ANA_MONITOR_H_

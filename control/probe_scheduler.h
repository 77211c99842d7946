// SPDX-License-Identifier: Apache-2.0
// The controller prober's bookkeeping, without threads or clocks of its own:
// which controller is due for a probe, which probe timed out, what a
// completion means, and the cumulative statistics (model::
// ControllerProbeStats). control/prober.h runs it on a thread against the
// real devices; the tests run it against a fake ProbeDevice and a fake
// clock.
//
// At most one probe per controller is outstanding: a controller that does
// not answer costs one command, which times out once (a `timeout`
// failure) and blocks that controller's next probe until the kernel
// completes or cancels it (the kernel's admin timeout, or the controller's
// deletion). Until then the controller counts as unreachable.
//
// It also schedules ANA log page reads of the controllers that want them
// (SetAnaWanted), one outstanding per controller, after successful probes.
#ifndef PATHWISE_CONTROL_PROBE_SCHEDULER_H_
#define PATHWISE_CONTROL_PROBE_SCHEDULER_H_

#include <cerrno>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "model/topology.h"
#include "model/types.h"
#include "nvme/ana_log.h"

namespace pathwise::control {

struct ProberOptions {
  // Time between the starts of two probes of one controller (> 0).
  absl::Duration interval = absl::Seconds(1);
  // A probe without a completion after this long is a `timeout` failure.
  absl::Duration timeout = absl::Seconds(2);
  // Where the controllers' char devices are (dev_dir/nvmeX).
  std::string dev_dir = "/dev";
  // The ANA log page of a controller that wants it (SetAnaWanted) is read
  // after its first successful probe and then after every ana_every-th
  // (0: never).
  int ana_every = 10;
};

// The system side of probing: opening controller char devices and sending
// one probe command. Errors are negated errnos, as the kernel returns them.
class ProbeDevice {
 public:
  virtual ~ProbeDevice() = default;
  // Opens the char device of `controller` (nvme0): a handle >= 0 or -errno.
  virtual int Open(absl::string_view controller) = 0;
  virtual void Close(int handle) = 0;
  // Whether `handle` is still the device that is now called `controller`:
  // false once the node is gone or is another device (the controller was
  // deleted, or its name was given to a new one).
  virtual bool Current(int handle, absl::string_view controller) = 0;
  // Sends one probe on `handle`, whose completion will carry `tag`: 0, or
  // -errno when nothing was sent.
  virtual int Send(int handle, uint64_t tag) = 0;
  // Sends a read of the ANA log page on `handle` (after a successful probe
  // of it, whose Identify data sizes the page), as Send does.
  // -EOPNOTSUPP: the controller does not report ANA.
  virtual int SendAnaLog(int /*handle*/, uint64_t /*tag*/) {
    return -EOPNOTSUPP;
  }
};

// The failure an errno stands for: kUnavailable when pathwise could not
// probe (no node, no permission, no passthru support), else kTransport
// (the controller is not live, gone, or the command was cancelled).
model::ProbeFailure FailureOfErrno(int err);

class ProbeScheduler {
 public:
  ProbeScheduler(ProberOptions options, ProbeDevice& device)
      : options_(std::move(options)), device_(device) {}
  ~ProbeScheduler();

  // The controllers to probe (a collection's topology). New ones are
  // probed at the next Step; ones that left are closed and forgotten (a
  // probe of theirs still outstanding is ignored when it completes).
  void SetControllers(const std::vector<std::string>& names, absl::Time now);

  // Times out, opens and sends what is due at `now`. Returns when it is
  // next due (InfiniteFuture with nothing to do).
  absl::Time Step(absl::Time now);

  // A completion of the probe `tag` at `now`; `res` as io_uring reports it
  // (nvme::DecodePassthruResult).
  void Complete(uint64_t tag, int32_t res, absl::Time now);

  // The controllers whose ANA log page to read (those whose namespaces
  // have no ANA state in sysfs); the others' reads stop and are forgotten.
  void SetAnaWanted(const std::vector<std::string>& names);
  // A completion of the ANA log read `tag`: the page, or why there is none.
  void CompleteAna(uint64_t tag, const absl::StatusOr<nvme::AnaLog>& log,
                   absl::Time now);
  // The last ANA log read of every controller that wants one and reports
  // ANA, by controller name.
  std::map<std::string, model::ControllerAnaLog, std::less<>> AnaLogs() const;

  // Every controller's statistics at `now`, by controller name.
  std::map<std::string, model::ControllerProbeStats, std::less<>> Stats(
      absl::Time now) const;

  // Probes sent and not completed, including those of controllers that
  // left (for tests: a hung controller must not grow this).
  size_t outstanding() const { return inflight_.size(); }

 private:
  struct Controller {
    int handle = -1;
    std::optional<uint64_t> tag;  // the outstanding probe
    absl::Time sent;
    bool timed_out = false;  // the outstanding probe was counted a timeout
    absl::Time next = absl::InfinitePast();
    model::ControllerProbeStats stats;
    std::string last_problem;  // logged when it changes
    // ANA log page reads (SetAnaWanted).
    bool ana_wanted = false;
    bool ana_unsupported = false;     // the controller does not report ANA
    std::optional<uint64_t> ana_tag;  // the outstanding read
    int probes_until_ana = 0;         // successful probes until the next read
    std::optional<model::ControllerAnaLog> ana;
  };

  void Probe(const std::string& name, Controller& c, absl::Time now);
  void Fail(const std::string& name, Controller& c, model::ProbeFailure f,
            const std::string& why);
  void Succeed(const std::string& name, Controller& c);
  void CloseHandle(Controller& c);
  void MaybeReadAna(const std::string& name, Controller& c);
  void AnaFailed(const std::string& name, Controller& c, std::string why);

  ProberOptions options_;
  ProbeDevice& device_;
  std::map<std::string, Controller, std::less<>> controllers_;
  // Outstanding probes and ANA reads: tag -> controller name.
  std::map<uint64_t, std::string> inflight_;
  std::map<uint64_t, std::string> ana_inflight_;
  uint64_t next_tag_ = 1;
};

}  // namespace pathwise::control

#endif  // PATHWISE_CONTROL_PROBE_SCHEDULER_H_

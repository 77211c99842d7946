// SPDX-License-Identifier: Apache-2.0
// The controller prober: every --probe-interval, one NVMe Identify
// Controller admin command per controller through io_uring passthru
// (nvme/admin.h says why that command and which privileges it needs),
// timed from submission to completion, with a userspace timeout.
//
// It runs on a thread of its own with its own io_uring, so a controller
// that does not answer never delays a collection: the collection loop only
// hands it the topology's controllers and copies the statistics under a
// mutex, which the prober thread holds only for system calls that do not
// wait for a controller (open, fstat, an io_uring submission: the kernel
// queues the command or punts it to its own worker). It is an I/O source of the
// pipeline (the `probe` collector): its statistics are part of the snapshot's
// model::IoReading (controller_probe), which scoring reads like any other
// I/O (docs/scoring.md) and the exporters publish as
// pathwise_controller_probe_latency_seconds and
// pathwise_controller_probe_failures_total.
//
// Where sysfs has no ANA state for a controller's namespaces (AnaWanted),
// the prober also reads the controller's ANA log page on the same ring,
// after its first successful probe and then every
// ProberOptions::ana_every-th; the result is model::IoReading::
// controller_ana, the snapshot's only ANA source for those controllers.
#ifndef PATHWISE_CONTROL_PROBER_H_
#define PATHWISE_CONTROL_PROBER_H_

#include <atomic>
#include <memory>
#include <optional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "collectors/collector.h"
#include "control/probe_scheduler.h"

namespace pathwise::control {

// The thread's side of a ProbeDevice: waiting for completions, and being
// woken from another thread.
class ProbeRing : public ProbeDevice {
 public:
  struct Done {
    uint64_t tag = 0;
    int32_t res = 0;
    // Set for an ANA log page read (ProbeDevice::SendAnaLog): the parsed
    // page, or why there is none (the command's error included).
    std::optional<absl::StatusOr<nvme::AnaLog>> ana;
  };
  // Waits up to `timeout` (or until Wake) and returns the completions of
  // probes that arrived. An error means the ring itself failed.
  virtual absl::StatusOr<std::vector<Done>> Wait(absl::Duration timeout) = 0;
  // Ends a Wait early; callable from any thread.
  virtual void Wake() = 0;
};

// The real ProbeRing: /dev/nvmeX opened read-only, Identify Controller over
// an io_uring with SQE128/CQE32, and the ANA log page (Get Log Page, which
// needs CAP_SYS_ADMIN) sized from the controller's last Identify data.
// Fails where io_uring is unavailable.
absl::StatusOr<std::unique_ptr<ProbeRing>> MakeUringProbeRing(
    const ProberOptions& options);

// The controllers whose ANA log page the prober reads: those with no path
// whose ANA state sysfs reported (with nvme_core.multipath=N there are no
// path devices at all, and the kernel keeps no ANA state).
std::vector<std::string> AnaWanted(const model::Topology& topology);

class Prober : public collectors::IoSource {
 public:
  // Starts the prober thread on `ring` (MakeUringProbeRing, or a fake).
  Prober(ProberOptions options, std::unique_ptr<ProbeRing> ring);
  // Stops the thread; outstanding probes are left to the kernel.
  ~Prober() override;

  absl::string_view name() const override { return "probe"; }
  // Hands the topology's controllers to the prober and copies every
  // controller's statistics into io.controller_probe, and the ANA log page
  // of those whose namespaces have no ANA state in sysfs into
  // io.controller_ana. Never waits for a probe.
  absl::Status Read(const model::Topology& topology,
                    model::IoReading& io) override;

 private:
  void Run();
  // One turn of Run: sends what is due, waits, takes the completions.
  void Turn();
  // A failed turn: reported by Read as the collector's error, logged once.
  void Failed(const std::string& error);

  std::unique_ptr<ProbeRing> ring_;
  absl::Mutex mu_;
  ProbeScheduler scheduler_ ABSL_GUARDED_BY(mu_);
  std::string ring_error_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace pathwise::control

#endif  // PATHWISE_CONTROL_PROBER_H_

// SPDX-License-Identifier: Apache-2.0
// One ublk queue's half of the NVMe multipath backend (nvme_backend.h):
// lives on the queue's thread and shares its ring.
#ifndef PATHWISE_DATAPATH_NVME_QUEUE_H_
#define PATHWISE_DATAPATH_NVME_QUEUE_H_

#include <linux/time_types.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "datapath/nvme_backend.h"
#include "datapath/shared_selector.h"
#include "nvme/io.h"
#include "policy/selector.h"

namespace pathwise::datapath {

class NvmeQueue final : public ublk::QueueBackend {
 public:
  // The paths' fds must already be registered files of context.ring(), at
  // indexes 0..paths-1 (AttachQueue does that).
  NvmeQueue(NvmeBackend& backend, ublk::QueueContext& context);
  ~NvmeQueue() override;

  void Submit(const ublk::IoRequest& request) override;
  void OnCqe(const io_uring_cqe& cqe) override;
  void Poll() override;
  void EndTurn() override;
  void Cancel(uint16_t tag) override;

 private:
  enum class Kind : uint8_t { kIo = 0, kProbe = 1, kTimer = 2 };
  struct Slot {
    ublk::IoRequest request;
    bool active = false;
    bool waiting = false;     // for a usable path
    bool timed_out = false;   // its path was marked failed for it
    bool delayed = false;     // held back by a Command Retry Delay
    int retry_prefer = -1;    // delayed: the path to prefer when it goes
    int64_t retry_at_ns = 0;  // delayed: when it goes out again
    int32_t fail_with = 0;    // delayed: out of attempts, fails with this
    int path = -1;            // where it is out; -1 none
    int attempts = 0;
    int64_t submit_ns = 0;  // to its current path
    int ahead = -1;         // I/Os in flight on that path before it
    int64_t wait_deadline_ns = 0;
    uint64_t generation = 0;
    nvme::DsmRange range;  // Deallocate's payload
  };

  static uint64_t Cookie(Kind kind, uint64_t generation, uint16_t index);
  // Sends the request to `prefer` while that path is usable, else to the
  // selector's choice; with no usable path it waits.
  void Dispatch(uint16_t tag, int64_t now, int prefer = -1);
  bool Issue(uint16_t tag, int path, int64_t now);
  void Finish(uint16_t tag, int32_t result);
  // Forgets the slot's command while it is still out (a cancelled request,
  // and the seeded defects).
  void AbandonCommand(uint16_t tag, int64_t now);
  static bool WritesData(ublk::IoOp op);
  void OnIoCqe(uint16_t tag, uint64_t generation, int32_t res);
  void OnProbeCqe(int path, int32_t res);
  // Sends the delayed requests whose Command Retry Delay has passed.
  void ServiceDelayed(int64_t now);
  // Timeouts, waiting requests, probes, selector ticks, counters.
  void Service(int64_t now);
  void RefreshPaths();
  void StartProbes(int64_t now);
  void ArmTimer();
  bool NeedsTimer() const;
  // The selector's view of slot s's request (as submitted to its path).
  static policy::IoRequest SelectorIo(const Slot& s);

  NvmeBackend& backend_;
  ublk::QueueContext& context_;
  const BackendOptions& options_;
  const uint32_t lba_shift_;
  SharedSelector& selector_;
  // This queue's completions not yet given to the selector (the loop turn's,
  // handed over at the next choice or at EndTurn).
  PendingCompletions pending_;
  std::vector<Slot> slots_;
  std::deque<uint16_t> waiting_;
  std::deque<uint16_t> delayed_;  // held back by a Command Retry Delay
  int in_flight_ = 0;             // this queue's commands out
  int64_t next_service_ns_ = 0;
  bool timer_armed_ = false;
  __kernel_timespec timer_ts_{};
  // A probe reads the first block of the namespace into its own buffer.
  std::vector<std::byte*> probe_buffers_;
  std::vector<bool> probing_;
  DatapathStats stats_;
};

}  // namespace pathwise::datapath

#endif  // PATHWISE_DATAPATH_NVME_QUEUE_H_

// SPDX-License-Identifier: Apache-2.0
// The eBPF path sampler: composes pathwise's BPF objects (block_object.h,
// nvme_object.h) into one reader: the block programs' attach mode, the
// BPF_ENABLE_STATS fd, the retried nvme attach, and one merged snapshot.
//
// Counting model (see bpf/ for the kernel side):
//  - Every block request is counted once, on the disk whose queue it
//    completes on (rq->q->disk): for NVMe multipath that is the hidden path
//    disk (nvmeXcYnZ). A head's numbers are the exact merge of its paths'.
//  - completed: final completions (errors included, failovers excluded);
//    bytes: bytes completed; latency: issue (blk_mq_start_request) to
//    completion, ns; errors: completions with a non-zero blk_status_t.
//  - A request ended by nvme_failover_req() is a failover of its path, not
//    an I/O: its bios complete later on another path and count there.
//  - Per path, from nvme_complete_rq: completions with a non-zero NVMe
//    status by class, and completions of retried commands. NVMe successes
//    are completed - errors of the path (exact, no per-I/O cost).
//  - Each disk instance, (dev_t, diskseq), has its own entries: a disk
//    created on a dev_t another disk freed starts from zero under its own
//    name. Userspace deletes the entries of a disk a newer one replaced
//    and keeps its final counts (DeviceIo::retired), so per name the
//    counters are monotonic from attach.
//
// Not thread-safe for concurrent calls; one owner (the collector) calls
// Read() each interval.
#ifndef PATHWISE_BPF_SAMPLER_H_
#define PATHWISE_BPF_SAMPLER_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bpf/block_object.h"
#include "bpf/nvme_object.h"
#include "bpf/program_stats.h"
#include "bpf/status.h"
#include "model/topology.h"

namespace pathwise::bpf {

// One path's NVMe statistics (every device with a per-path entry).
// stats.errors_by_class is set only while the nvme object is attached.
struct PathSample {
  model::DevId dev;
  uint64_t diskseq = 0;  // as DeviceIo::diskseq
  std::string disk;      // as DeviceIo::disk
  model::PathNvmeStats stats;
  bool retired = false;  // as DeviceIo::retired
};

struct SamplerSnapshot {
  std::vector<DeviceIo> io;       // sorted by (dev, diskseq, op)
  std::vector<PathSample> paths;  // sorted by (dev, diskseq)
  // By DropReason.
  std::array<uint64_t, model::kDropReasonCount> dropped{};
  uint64_t start_from_kernel = 0;  // latencies from rq->io_start_time_ns
  uint64_t start_from_own = 0;     // latencies from pathwise's own stamp
  std::vector<ProgramStats> programs;
  // Run-time stats are being collected: this sampler holds a
  // BPF_ENABLE_STATS fd, or the kernel.bpf_stats_enabled sysctl is on.
  bool bpf_stats_enabled = false;
  NvmeAttachState nvme_state = NvmeAttachState::kDisabled;
  std::string nvme_status_message;
  // See BpfSampler::init_context_hidden().
  bool init_context_hidden = false;
  // Per hardware context statistics (SamplerOptions::hctx_slots > 0):
  // every completion counted in io is counted in one hctx entry of its disk,
  // or in dropped_hctx. Sorted by (dev, diskseq, hctx).
  bool hctx_on = false;
  std::vector<DiskHctxIo> hctx;
  uint64_t dropped_hctx = 0;
};

struct SamplerOptions {
  // Attach nvme_complete_rq (nvme-core) for NVMe status, retries.
  bool nvme = true;
  // Hold a BPF_ENABLE_STATS(BPF_STATS_RUN_TIME) fd while the sampler lives,
  // so that ProgramStats.run_time_ns/run_count count. Costs two clock reads
  // per program run, for every BPF program on the host.
  bool enable_bpf_stats = false;
  // Always stamp the issue time in a map, even where the kernel stamps
  // rq->io_start_time_ns (tests and diagnostics; slower).
  bool force_own_start = false;
  // Account every completion in the per-CPU spill slots instead of the
  // (device, op) map (tests: the path taken when creating an entry fails).
  bool force_spill = false;
  // With force_spill, force only this device (kernel dev_t encoding,
  // major << 20 | minor); 0 = every device.
  uint32_t force_spill_dev = 0;
  // Capacity of the own-issue-timestamp map (requests in flight on queues
  // without QUEUE_FLAG_STATS, and passthrough).
  uint32_t max_inflight = 16384;
  // Capacity of the (device, op) and per-path maps.
  uint32_t max_devices = 4096;
  // (device, op) slots found without a hash (pw_io_slot), rounded up to a
  // power of two; keys beyond them, or whose slot another key holds, are
  // counted in the hash. 0 = hash only. Costs sizeof(pw_io_val) (896 B)
  // per slot per possible CPU: 112 KiB per CPU at 128.
  uint32_t io_slots = 128;
  // Per hardware context statistics: the (disk, hardware context) slots,
  // 0 = off (the programs then cost what they do without them). Slots are
  // not reused when a disk goes away; see HctxSlotsFor.
  uint32_t hctx_slots = 0;
};

// The I/O slots for a host with `disks` block devices now: four per disk
// (a disk's reads, writes and flushes each take one, and disks come and
// go), a power of two from 16 to 128, so that a large host pays at most
// 112 KiB per possible CPU; keys beyond them are counted in the hash.
uint32_t IoSlotsFor(int disks);

// The slots for a host with `present` hardware contexts over its block
// devices now: twice that (disks come and go, each new instance takes new
// slots), at least 256, at most 16384. pw_hctx costs 224 bytes per slot per
// possible CPU.
uint32_t HctxSlotsFor(int present);

class BpfSampler {
 public:
  // Loads and attaches the block programs (tp_btf if the kernel supports
  // it, else raw_tp) and, if options.nvme, the nvme_complete_rq program
  // when nvme-core is there. Fails with a clear reason when BPF or BTF is
  // unusable (no /sys/kernel/btf/vmlinux, no privileges, verifier error).
  // An unavailable nvme program is not an error: see nvme_state.
  static absl::StatusOr<std::unique_ptr<BpfSampler>> Create(
      const SamplerOptions& options = {});

  // Detaches and unloads everything: links, programs and maps are closed,
  // nothing is pinned.
  ~BpfSampler();
  BpfSampler(const BpfSampler&) = delete;
  BpfSampler& operator=(const BpfSampler&) = delete;

  // Reads all maps (summing over CPUs) and program stats. Retries the
  // nvme attach first when nvme-core was not loaded.
  absl::StatusOr<SamplerSnapshot> Read();

  // "tp_btf" or "raw_tp": how the block programs are attached.
  const std::string& block_attach_mode() const;
  // Kernel IDs of everything this sampler created (for leak checks).
  std::vector<uint32_t> ProgramIds() const;
  std::vector<uint32_t> MapIds() const;
  std::vector<uint32_t> LinkIds() const;
  // Notes on kernel-layout fallbacks taken at load (may be empty).
  const std::vector<std::string>& notes() const;
  // The kernel skips pathwise's programs while a thread of PID 1 is current
  // (see BlockLayout::init_context_hidden): completions handled there are
  // neither counted nor dropped.
  bool init_context_hidden() const;

  struct Impl;

 private:
  explicit BpfSampler(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace pathwise::bpf

#endif  // PATHWISE_BPF_SAMPLER_H_

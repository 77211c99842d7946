// SPDX-License-Identifier: Apache-2.0
// The block object (bpf/pathwise_block.bpf.c): block_rq_issue and
// block_rq_complete, counted per (device, op) with a latency histogram,
// per-path failovers, disk names and drop counters. Owns the per-path and
// counter maps that the nvme object shares.
#ifndef PATHWISE_BPF_BLOCK_OBJECT_H_
#define PATHWISE_BPF_BLOCK_OBJECT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bpf/kernel_btf.h"
#include "bpf/map_decode.h"
#include "bpf/program_stats.h"
#include "bpf/status.h"
#include "model/topology.h"
#include "model/types.h"

struct pathwise_block;

namespace pathwise::bpf {

struct BlockOptions {
  bool force_own_start = false;  // see SamplerOptions
  bool force_spill = false;
  uint32_t force_spill_dev = 0;
  uint32_t max_inflight = 16384;
  uint32_t max_devices = 4096;
  // I/O slots (pw_io_slot), rounded up to a power of two; 0 = none.
  uint32_t io_slots = 128;
  // Per hardware context statistics (pw_hctx): the number of (disk,
  // hardware context) slots; 0 = off, the programs then skip that code.
  uint32_t hctx_slots = 0;
};

class BlockObject {
 public:
  // Loads and attaches the block programs: tp_btf when the kernel can
  // attach them, raw_tp otherwise (or when the tp_btf load fails). Notes
  // on the fallbacks taken are appended to `notes`.
  static absl::StatusOr<std::unique_ptr<BlockObject>> Load(
      const BlockLayout& layout, const BlockOptions& options, int ncpus,
      std::vector<std::string>& notes);

  ~BlockObject();
  BlockObject(const BlockObject&) = delete;
  BlockObject& operator=(const BlockObject&) = delete;

  // Reads every map (BlockSample, map_decode.h). The entries of disks a
  // newer disk has replaced (SupersededDisks) are deleted from the maps and
  // their counts kept in a tally here, so that the maps hold the disks that
  // exist (and not every disk there ever was) and no count goes backwards.
  absl::StatusOr<BlockSample> Read();

  // "tp_btf" or "raw_tp".
  const std::string& attach_mode() const { return mode_; }
  // The maps the nvme object reuses.
  int path_map_fd() const;
  int counters_map_fd() const;
  void AppendIds(ObjectIds& out) const;

 private:
  BlockObject(pathwise_block* skel, std::string mode, int ncpus,
              uint32_t hctx_slots, uint32_t io_slots)
      : skel_(skel),
        mode_(std::move(mode)),
        ncpus_(ncpus),
        hctx_slots_(hctx_slots),
        io_slots_(io_slots) {}
  static absl::StatusOr<std::unique_ptr<BlockObject>> LoadMode(
      const BlockLayout& layout, const BlockOptions& options, int ncpus,
      bool use_btf);
  absl::StatusOr<BlockMaps> ReadMaps() const;
  // Deletes the map entries of the `gone` disks and moves their counts
  // into retired_.
  void RetireGone(const std::set<DiskKey>& gone, BlockMaps& maps);
  // Gives a gone disk's I/O slot back (pathwise_bpf.h): false when it could
  // not even be marked retiring (it is then still read, and retried).
  bool FreeIoSlot(uint32_t index);
  // Zeroes a retiring slot's values and frees its owner.
  void FinishIoSlot(uint32_t index);
  // The pw_hctx slots of every disk in pw_hctx_slot but the `gone` ones,
  // named from `maps`, into out.hctx.
  absl::Status ReadHctx(const BlockMaps& maps, const std::set<DiskKey>& gone,
                        BlockSample& out) const;

  pathwise_block* skel_;
  std::string mode_;
  int ncpus_;
  uint32_t hctx_slots_;
  uint32_t io_slots_;  // pw_io_slot's entries, 0 = none
  RetiredDisks retired_;
};

}  // namespace pathwise::bpf

#endif  // PATHWISE_BPF_BLOCK_OBJECT_H_

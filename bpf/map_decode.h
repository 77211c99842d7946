// SPDX-License-Identifier: Apache-2.0
// Decoding of the raw contents of the block object's BPF maps
// (pathwise_block.bpf.c: pw_disk, pw_io, pw_io_owner and pw_io_slot,
// pw_io_spill, pw_path, pw_counters)
// into samples, on byte buffers only: no fds, no libbpf. The reader
// (block_object.cc) copies each map entry into buffers and hands them here;
// the fuzz target (tests/fuzz/bpf_decode_fuzz.cc) hands it anything.
//
// Hostile or inconsistent bytes never cause undefined behaviour:
//  - a key or value whose size is not the layout's (per-CPU values: one
//    8-byte-aligned copy per possible CPU), a non-zero key padding, or a
//    non-positive CPU count is an error naming the map and the sizes;
//  - a disk name without a NUL in its 32 bytes, empty, or with a byte that
//    is not printable ASCII (or is '/') decodes as "" (unknown: the sample
//    then names the device by its dev_t, "259:3"), counted in bad_names;
//  - an op value outside enum pw_op is counted under Op::kOther, counted in
//    unknown_ops;
//  - sums over CPUs and over entries saturate at 2^64-1 instead of
//    wrapping (a counter must never go backwards), counted in saturated; a
//    value whose own_start exceeds its count counts no kernel starts.
#ifndef PATHWISE_BPF_MAP_DECODE_H_
#define PATHWISE_BPF_MAP_DECODE_H_

#include <array>
#include <compare>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "bpf/hctx_decode.h"
#include "bpf/program_stats.h"
#include "bpf/status.h"
#include "model/topology.h"
#include "model/types.h"

namespace pathwise::bpf {

using MapBytes = absl::Span<const uint8_t>;

// One disk instance as the kernel side keys it: its dev_t and its
// gendisk.diskseq (0 where the kernel has none). A disk created on a dev_t
// another disk freed has a larger diskseq, hence other keys.
struct DiskKey {
  uint32_t dev = 0;  // kernel dev_t encoding, major << 20 | minor
  uint64_t seq = 0;
  friend auto operator<=>(const DiskKey&, const DiskKey&) = default;
};

// A pw_io key: a disk and the raw op value (enum pw_op if valid).
struct IoKey {
  DiskKey disk;
  uint32_t op = 0;
  friend auto operator<=>(const IoKey&, const IoKey&) = default;
};

// A pw_io value summed over CPUs (and entries), saturating.
struct IoTotals {
  uint64_t count = 0, bytes = 0, lat_sum_ns = 0, errors = 0, own_start = 0;
  std::array<uint64_t, LatencyHistogram::kBuckets> buckets{};
};

// Per-path counters (pw_path).
struct PathCounters {
  uint64_t failovers = 0;  // requests failed over to another path
  // Completions with a non-zero NVMe status, indexed like kNvmeErrorClasses.
  std::array<uint64_t, kNvmeErrorClassCount> errors_by_class{};
  uint64_t retries = 0;  // completions of retried commands
};

// The block object's maps, decoded.
struct BlockMaps {
  std::map<DiskKey, std::string> names;    // pw_disk ("" = unusable name)
  std::map<IoKey, IoTotals> io;            // pw_io and the I/O slots
  std::map<IoKey, uint32_t> io_slot;       // the slot each key owns
  std::vector<uint32_t> io_slot_retiring;  // slots left PW_IO_SLOT_RETIRING
  std::map<IoKey, IoTotals> spill;         // pw_io_spill, every used slot
  std::map<DiskKey, PathCounters> paths;   // pw_path
  // pw_counters summed over CPUs, by enum pw_counter.
  uint64_t dropped_start_map_full = 0;
  uint64_t dropped_no_start_time = 0;
  uint64_t dropped_io_map_full = 0;
  uint64_t dropped_path_map_full = 0;       // by the block programs
  uint64_t dropped_nvme_path_map_full = 0;  // by the nvme program
  uint64_t dropped_hctx = 0;             // counted in pw_io, in no pw_hctx slot
  uint64_t dropped_start_collision = 0;  // every slot of the line taken
  // Fallbacks taken (see the top of this file).
  uint64_t bad_names = 0;
  uint64_t unknown_ops = 0;
  uint64_t saturated = 0;
};

// Decodes one read of the maps, entry by entry.
class BlockMapDecoder {
 public:
  // ncpus: the possible CPUs, the number of copies of a per-CPU value.
  explicit BlockMapDecoder(int ncpus) : ncpus_(ncpus) {}

  // pw_disk: key pw_disk_key, value pw_disk_name.
  absl::Status AddDiskName(MapBytes key, MapBytes value);
  // pw_io: key pw_io_key, value ncpus x pw_io_val.
  absl::Status AddIo(MapBytes key, MapBytes values);
  // One I/O slot: its pw_io_owner and, when owned, ncpus x pw_io_val (empty
  // otherwise). An owned slot's counts add to its key's pw_io counts.
  absl::Status AddIoSlot(uint32_t index, MapBytes owner, MapBytes values);
  // One index of pw_io_spill: ncpus x pw_io_spill (a slot counts when its
  // `used` is non-zero).
  absl::Status AddSpillSlot(MapBytes values);
  // pw_path: key pw_disk_key, value pw_path_val.
  absl::Status AddPath(MapBytes key, MapBytes value);
  // pw_counters[0]: ncpus x pw_counters.
  absl::Status SetCounters(MapBytes values);

  const BlockMaps& maps() const { return maps_; }
  BlockMaps Take() && { return std::move(maps_); }

 private:
  absl::Status CheckPerCpu(const char* map, MapBytes values,
                           size_t value_size) const;
  int ncpus_;
  BlockMaps maps_;
};

// The per-CPU value stride of a BPF_MAP_TYPE_PERCPU_* map: each CPU's copy
// is rounded up to 8 bytes.
constexpr size_t PerCpuStride(size_t value_size) {
  return (value_size + 7) / 8 * 8;
}

// One (device, op) entry of a sample: completed, bytes, time_ns (summed
// latency), errors and the latency histogram are all set.
struct DeviceIo {
  model::DevId dev;
  uint64_t diskseq = 0;  // DiskKey::seq
  // The disk's kernel name (nvme0c1n1, loop3), recorded by the kernel side
  // when the entry was created; "" if unknown. Hidden NVMe path disks have
  // no dev_t visible to userspace, so this is the join key.
  std::string disk;
  model::Op op = model::Op::kOther;
  model::OpStats stats;
  // The final counts of disks that are gone (a newer disk holds their dev_t
  // or their name), kept by userspace after it deleted their map entries:
  // constant from then on, one entry per name and op.
  bool retired = false;
};

// One per-path entry of a sample.
struct PathEntry {
  DiskKey key;
  std::string disk;  // as DeviceIo::disk
  PathCounters counters;
  bool retired = false;  // as DeviceIo::retired
};

// One hardware context of one disk (pw_hctx), summed over CPUs.
struct DiskHctxIo {
  DiskKey key;
  std::string disk;  // as DeviceIo::disk
  int hctx = 0;      // blk_mq_hw_ctx.queue_num
  HctxTotals totals;
};

// What one read of the block object's maps returns.
struct BlockSample {
  // Sorted by (dev, diskseq, op); a retired entry carries the dev_t and
  // diskseq of the newest gone disk of its name.
  std::vector<DeviceIo> io;
  // The per-path map, shared with the nvme object and read once here:
  // failovers (block programs), and NVMe status classes and retries (the
  // nvme program, zero while it is not attached). Sorted like io.
  std::vector<PathEntry> paths;
  uint64_t start_from_kernel = 0;  // latencies from rq->io_start_time_ns
  uint64_t start_from_own = 0;     // latencies from pathwise's own stamp
  uint64_t dropped_start_map_full = 0;
  uint64_t dropped_start_collision = 0;  // every slot of the line taken
  uint64_t dropped_no_start_time = 0;
  uint64_t dropped_io_map_full = 0;
  uint64_t dropped_path_map_full = 0;       // by the block programs
  uint64_t dropped_nvme_path_map_full = 0;  // by the nvme program
  std::vector<ProgramStats> programs;
  // Per hardware context statistics (BlockOptions::hctx_slots > 0 only):
  // sorted by (disk, hctx); disks a newer one replaced are left out.
  bool hctx_on = false;
  std::vector<DiskHctxIo> hctx;
  uint64_t dropped_hctx = 0;  // completions in io, in no hctx entry
};

// The disk instances of `maps` that a newer one has replaced: another key
// with the same dev_t, or the same non-empty name, and a larger diskseq.
// The kernel hands out diskseq in increasing order, and a dev_t or a name
// belongs to one disk at a time, so these disks are gone and do no more
// I/O: their entries can be deleted without losing a count. Never a key
// with seq 0 (a kernel without diskseq: one instance per dev_t).
std::set<DiskKey> SupersededDisks(const BlockMaps& maps);

// The counts of disks whose pw_io and pw_path entries userspace deleted,
// merged per name (or dev_t when unnamed) and op, so that a name's
// counters stay monotonic and the tally stays as small as the set of names.
class RetiredDisks {
 public:
  // Moves the pw_io entries `io` and the pw_path entries `paths` of the
  // `gone` disks (deleted from the kernel maps by the caller) out of `maps`
  // into the tally. The spill slot counts of those disks stay in `maps`
  // (the slots are never released, and are read again every time); the
  // names of the gone disks are kept here for them while they have such
  // slots (the caller deletes their pw_disk entries).
  void Retire(const std::set<DiskKey>& gone, const std::set<IoKey>& io,
              const std::set<DiskKey>& paths, BlockMaps& maps);
  // The name of a retired disk that still has spill slots, "" if unknown.
  std::string NameOf(const DiskKey& key) const;
  // Drops the names kept for disks that no longer have spill slots.
  void Prune(const BlockMaps& maps);

  const std::map<std::pair<std::string, uint32_t>, DeviceIo>& io() const {
    return io_;
  }
  const std::map<std::string, PathEntry>& paths() const { return paths_; }

 private:
  std::map<std::pair<std::string, uint32_t>, DeviceIo> io_;
  std::map<std::string, PathEntry> paths_;
  std::map<DiskKey, std::string> names_;
};

// The sample of `maps` (pw_io and spill slots summed per key, names
// joined) and of the `retired` tally. Programs are left empty.
BlockSample AssembleSample(const BlockMaps& maps, const RetiredDisks& retired);

}  // namespace pathwise::bpf

#endif  // PATHWISE_BPF_MAP_DECODE_H_

// The block object (bpf/pathwise_block.bpf.c): block_rq_issue and
// block_rq_complete, counted per (device, op) with a latency histogram,
// per-path failovers, disk names and drop counters. Owns the per-path and
// counter maps that the nvme object shares.
#ifndef PATHWISE_BPF_BLOCK_OBJECT_H_
#define PATHWISE_BPF_BLOCK_OBJECT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bpf/kernel_btf.h"
#include "bpf/program_stats.h"
#include "bpf/status.h"
#include "model/topology.h"
#include "model/types.h"

struct pathwise_block;

namespace pathwise::bpf {

// One (device, op) entry: completed, bytes, time_ns (summed latency),
// errors and the latency histogram are all set.
struct DeviceIo {
  model::DevId dev;
  // The disk's kernel name (nvme0c1n1, loop3), recorded by the kernel side
  // when the entry was created; "" if unknown. Hidden NVMe path disks have
  // no dev_t visible to userspace, so this is the join key.
  std::string disk;
  model::Op op = model::Op::kOther;
  model::OpStats stats;
};

struct BlockOptions {
  bool force_own_start = false;  // see SamplerOptions
  bool force_spill = false;
  uint32_t force_spill_dev = 0;
  uint32_t max_inflight = 16384;
  uint32_t max_devices = 4096;
};

// What one read of the block object's maps returns.
struct PathCounters {
  uint64_t failovers = 0;  // requests failed over to another path
  // Completions with a non-zero NVMe status, indexed like kNvmeErrorClasses.
  std::array<uint64_t, kNvmeErrorClassCount> errors_by_class{};
  uint64_t retries = 0;  // completions of retried commands
};

struct BlockSample {
  std::vector<DeviceIo> io;  // sorted by (dev, op)
  // Kernel dev_t -> disk name, for every device with an entry.
  std::map<uint32_t, std::string> disk_names;
  // The per-path map, shared with the nvme object and read once here, by
  // kernel dev_t: failovers (block programs), and NVMe status classes and
  // retries (the nvme program, zero while it is not attached).
  std::map<uint32_t, PathCounters> paths;
  uint64_t start_from_kernel = 0;  // latencies from rq->io_start_time_ns
  uint64_t start_from_own = 0;     // latencies from pathwise's own stamp
  uint64_t dropped_start_map_full = 0;
  uint64_t dropped_no_start_time = 0;
  uint64_t dropped_io_map_full = 0;
  uint64_t dropped_path_map_full = 0;       // by the block programs
  uint64_t dropped_nvme_path_map_full = 0;  // by the nvme program
  std::vector<ProgramStats> programs;
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

  absl::StatusOr<BlockSample> Read() const;

  // "tp_btf" or "raw_tp".
  const std::string& attach_mode() const { return mode_; }
  // The maps the nvme object reuses.
  int path_map_fd() const;
  int counters_map_fd() const;
  void AppendIds(ObjectIds& out) const;

 private:
  BlockObject(pathwise_block* skel, std::string mode, int ncpus)
      : skel_(skel), mode_(std::move(mode)), ncpus_(ncpus) {}
  static absl::StatusOr<std::unique_ptr<BlockObject>> LoadMode(
      const BlockLayout& layout, const BlockOptions& options, int ncpus,
      bool use_btf);
  absl::Status ReadIo(BlockSample& out) const;

  pathwise_block* skel_;
  std::string mode_;
  int ncpus_;
};

}  // namespace pathwise::bpf

#endif  // PATHWISE_BPF_BLOCK_OBJECT_H_

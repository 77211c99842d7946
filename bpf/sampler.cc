// SPDX-License-Identifier: Apache-2.0
#include "bpf/sampler.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <fstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "bpf/object_util.h"

namespace pathwise::bpf {
namespace {

bool ReadBpfStatsSysctl() {
  std::ifstream f("/proc/sys/kernel/bpf_stats_enabled");
  int v = 0;
  return (f >> v) && v != 0;
}

// Per-path statistics: every device with a pw_path entry (failovers are
// counted without the nvme program); NVMe status classes and retries only
// while the nvme program is attached (else nothing counts them).
std::vector<PathSample> MergePaths(const BlockSample& block,
                                   bool nvme_attached) {
  std::vector<PathSample> out;
  out.reserve(block.paths.size());
  for (const PathEntry& e : block.paths) {  // sorted by disk
    PathSample& p = out.emplace_back();
    p.dev = model::DevId::FromKernel(e.key.dev);
    p.diskseq = e.key.seq;
    p.disk = e.disk;
    p.retired = e.retired;
    p.stats.failovers = e.counters.failovers;
    if (nvme_attached) {
      p.stats.errors_by_class = e.counters.errors_by_class;
      p.stats.retries = e.counters.retries;
    }
  }
  return out;
}

void FillDrops(const BlockSample& block, SamplerSnapshot& snap) {
  auto drop = [&](model::DropReason r) -> uint64_t& {
    return snap.dropped[static_cast<size_t>(r)];
  };
  drop(model::DropReason::kStartMapFull) = block.dropped_start_map_full;
  drop(model::DropReason::kNoStartTime) = block.dropped_no_start_time;
  drop(model::DropReason::kIoMapFull) = block.dropped_io_map_full;
  drop(model::DropReason::kPathMapFull) =
      block.dropped_path_map_full + block.dropped_nvme_path_map_full;
  uint64_t recursion = 0;
  for (const ProgramStats& p : snap.programs) recursion += p.recursion_misses;
  drop(model::DropReason::kRecursion) = recursion;
  drop(model::DropReason::kStartCollision) = block.dropped_start_collision;
}

}  // namespace

struct BpfSampler::Impl {
  SamplerOptions options;
  std::unique_ptr<BlockObject> block;
  NvmeAttach nvme;
  std::vector<std::string> notes;
  bool init_context_hidden = false;
  int stats_fd = -1;
  int ncpus = 0;

  ~Impl() {
    // The nvme object reuses the block object's maps: close it first.
    nvme.object.reset();
    block.reset();
    if (stats_fd >= 0) close(stats_fd);
  }

  void AttachNvmeObject() {
    nvme = AttachNvme(block->path_map_fd(), block->counters_map_fd());
  }
};

absl::StatusOr<std::unique_ptr<BpfSampler>> BpfSampler::Create(
    const SamplerOptions& options) {
  if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
    return absl::FailedPreconditionError(
        "kernel BTF /sys/kernel/btf/vmlinux is missing or unreadable; the "
        "BPF sampler needs a kernel built with CONFIG_DEBUG_INFO_BTF=y");
  }
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->ncpus = libbpf_num_possible_cpus();
  if (impl->ncpus <= 0) {
    return absl::InternalError("cannot determine the number of possible CPUs");
  }

  struct btf* vmlinux = btf__load_vmlinux_btf();
  if (!vmlinux) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot parse kernel BTF /sys/kernel/btf/vmlinux: ", Errno(errno)));
  }
  absl::StatusOr<BlockLayout> layout = ReadBlockLayout(vmlinux);
  btf__free(vmlinux);
  if (!layout.ok()) return layout.status();
  impl->notes = layout->fallbacks;
  impl->init_context_hidden = layout->init_context_hidden;

  if (options.enable_bpf_stats) {
    impl->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
    if (impl->stats_fd < 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "BPF_ENABLE_STATS(BPF_STATS_RUN_TIME) failed: ", Errno(errno)));
    }
  }

  const BlockOptions block_options = {
      .force_own_start = options.force_own_start,
      .force_spill = options.force_spill,
      .force_spill_dev = options.force_spill_dev,
      .max_inflight = options.max_inflight,
      .max_devices = options.max_devices,
      .io_slots = options.io_slots,
      .hctx_slots = options.hctx_slots,
  };
  absl::StatusOr<std::unique_ptr<BlockObject>> block =
      BlockObject::Load(*layout, block_options, impl->ncpus, impl->notes);
  if (!block.ok()) return block.status();
  impl->block = *std::move(block);

  if (options.nvme) {
    impl->AttachNvmeObject();
  } else {
    impl->nvme.state = NvmeAttachState::kDisabled;
  }
  return std::unique_ptr<BpfSampler>(new BpfSampler(std::move(impl)));
}

BpfSampler::BpfSampler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BpfSampler::~BpfSampler() = default;

const std::string& BpfSampler::block_attach_mode() const {
  return impl_->block->attach_mode();
}
bool BpfSampler::init_context_hidden() const {
  return impl_->init_context_hidden;
}

const std::vector<std::string>& BpfSampler::notes() const {
  return impl_->notes;
}

namespace {

ObjectIds Ids(const BlockObject& block, const NvmeObject* nvme) {
  ObjectIds ids;
  block.AppendIds(ids);
  if (nvme) nvme->AppendIds(ids);
  return ids;
}

}  // namespace

std::vector<uint32_t> BpfSampler::ProgramIds() const {
  return Ids(*impl_->block, impl_->nvme.object.get()).programs;
}

std::vector<uint32_t> BpfSampler::MapIds() const {
  std::vector<uint32_t> out = Ids(*impl_->block, impl_->nvme.object.get()).maps;
  // The nvme object's pw_path and pw_counters are the block object's.
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<uint32_t> BpfSampler::LinkIds() const {
  return Ids(*impl_->block, impl_->nvme.object.get()).links;
}

absl::StatusOr<SamplerSnapshot> BpfSampler::Read() {
  Impl& im = *impl_;
  if (im.options.nvme && im.nvme.state == NvmeAttachState::kNotLoaded &&
      NvmeCoreLoaded()) {
    im.AttachNvmeObject();
  }

  absl::StatusOr<BlockSample> block = im.block->Read();
  if (!block.ok()) return block.status();
  std::optional<NvmeSample> nvme;
  if (im.nvme.object) {
    absl::StatusOr<NvmeSample> n = im.nvme.object->Read();
    if (!n.ok()) return n.status();
    nvme = *std::move(n);
  }

  SamplerSnapshot snap;
  snap.nvme_state = im.nvme.state;
  snap.nvme_status_message = im.nvme.message;
  snap.init_context_hidden = im.init_context_hidden;
  snap.bpf_stats_enabled = im.stats_fd >= 0 || ReadBpfStatsSysctl();
  snap.start_from_kernel = block->start_from_kernel;
  snap.start_from_own = block->start_from_own;
  snap.paths = MergePaths(*block, nvme.has_value());
  snap.io = std::move(block->io);
  snap.programs = std::move(block->programs);
  if (nvme) {
    for (ProgramStats& p : nvme->programs)
      snap.programs.push_back(std::move(p));
  }
  FillDrops(*block, snap);
  snap.hctx_on = block->hctx_on;
  snap.hctx = std::move(block->hctx);
  snap.dropped_hctx = block->dropped_hctx;
  return snap;
}

uint32_t IoSlotsFor(int disks) {
  return std::clamp<uint32_t>(
      std::bit_ceil(static_cast<uint32_t>(4 * std::clamp(disks, 0, 1024))), 16,
      128);
}

uint32_t HctxSlotsFor(int present) {
  return static_cast<uint32_t>(
      std::clamp(2 * std::max(present, 0), 256, 16384));
}

}  // namespace pathwise::bpf

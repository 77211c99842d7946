#include "collectors/bpf_sampler.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "collectors/bpf_btf.h"
#include "pathwise_block.skel.h"
#include "pathwise_nvme.skel.h"

extern "C" {
#include "bpf/pathwise_bpf.h"
}

namespace pathwise::bpf {
namespace {

constexpr size_t kLogSize = 1 << 20;
constexpr char kNvmeModule[] = "nvme_core";

std::string Errno(int err) { return strerror(err < 0 ? -err : err); }

// The last `lines` lines of a verifier log, for error messages.
std::string LogTail(const std::string& log, size_t lines = 12) {
  std::vector<std::string> all;
  size_t pos = 0;
  while (pos < log.size()) {
    size_t nl = log.find('\n', pos);
    if (nl == std::string::npos) nl = log.size();
    if (nl > pos) all.push_back(log.substr(pos, nl - pos));
    pos = nl + 1;
  }
  const size_t from = all.size() > lines ? all.size() - lines : 0;
  std::string out;
  for (size_t i = from; i < all.size(); ++i) out += "\n  " + all[i];
  return out;
}

absl::Status LoadError(const std::string& what, int err, const char* log) {
  const std::string verifier_log(log ? log : "");
  if ((err == -EPERM || err == -EACCES) && verifier_log.empty()) {
    return absl::PermissionDeniedError(
        what +
        ": permission denied: loading BPF programs needs root (CAP_BPF, "
        "CAP_PERFMON and CAP_SYS_RESOURCE)");
  }
  return absl::FailedPreconditionError(
      what + " failed: " + Errno(err) +
      (verifier_log.empty() ? std::string()
                            : "; verifier log tail:" + LogTail(verifier_log)));
}

bool ReadBpfStatsSysctl() {
  std::ifstream f("/proc/sys/kernel/bpf_stats_enabled");
  int v = 0;
  return (f >> v) && v != 0;
}

template <typename Info>
absl::StatusOr<Info> GetInfo(int fd) {
  Info info = {};
  uint32_t len = sizeof(info);
  if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0) {
    return absl::InternalError(
        absl::StrCat("bpf_obj_get_info_by_fd: ", Errno(errno)));
  }
  return info;
}

// Sums a per-CPU map's values over CPUs for every key, calling
// fn(key, values) with one value per possible CPU.
template <typename K, typename V, typename Fn>
absl::Status ForEachPerCpu(int map_fd, int ncpus, Fn&& fn) {
  std::vector<V> values(static_cast<size_t>(ncpus));
  K key{};
  K next{};
  const K* prev = nullptr;
  while (true) {
    if (bpf_map_get_next_key(map_fd, prev, &next) != 0) {
      if (errno == ENOENT) break;
      return absl::InternalError(
          absl::StrCat("bpf_map_get_next_key: ", Errno(errno)));
    }
    if (bpf_map_lookup_elem(map_fd, &next, values.data()) == 0) {
      fn(next, values);
    } else if (errno != ENOENT) {
      return absl::InternalError(
          absl::StrCat("bpf_map_lookup_elem: ", Errno(errno)));
    }
    key = next;
    prev = &key;
  }
  return absl::OkStatus();
}

}  // namespace

std::string DeviceNumber::ToString() const {
  return absl::StrCat(major, ":", minor);
}

void IoStats::Merge(const IoStats& o) {
  completed += o.completed;
  bytes += o.bytes;
  latency_sum_ns += o.latency_sum_ns;
  errors += o.errors;
  latency.Merge(o.latency);
}

IoStats MergeIo(const std::vector<const IoStats*>& parts) {
  IoStats out;
  for (const IoStats* p : parts) {
    if (p) out.Merge(*p);
  }
  return out;
}

struct BpfSampler::Impl {
  SamplerOptions options;
  pathwise_block* block = nullptr;
  pathwise_nvme* nvme = nullptr;
  std::string mode;
  std::vector<std::string> notes;
  int stats_fd = -1;
  int ncpus = 0;
  NvmeAttachState nvme_state = NvmeAttachState::kDisabled;
  std::string nvme_message;

  ~Impl() {
    // Links first (detach), then programs and maps: all by closing fds;
    // nothing was pinned, so nothing outlives these calls.
    if (nvme) pathwise_nvme__destroy(nvme);
    if (block) pathwise_block__destroy(block);
    if (stats_fd >= 0) close(stats_fd);
  }

  absl::Status LoadBlock(const BlockLayout& layout, bool use_btf);
  void TryAttachNvme();
  absl::Status LoadNvme(const NvmeLayout& layout, bool use_btf,
                        bool in_vmlinux);
};

absl::Status BpfSampler::Impl::LoadBlock(const BlockLayout& layout,
                                         bool use_btf) {
  std::string log(kLogSize, '\0');
  LIBBPF_OPTS(bpf_object_open_opts, open_opts);
  open_opts.kernel_log_buf = log.data();
  open_opts.kernel_log_size = log.size();
  open_opts.kernel_log_level = 0;  // log only on failure
  pathwise_block* skel = pathwise_block__open_opts(&open_opts);
  if (!skel) {
    return absl::InternalError(
        absl::StrCat("opening the block BPF object: ", Errno(errno)));
  }
  absl::Cleanup destroy = [&] { pathwise_block__destroy(skel); };

  for (size_t i = 0; i < layout.op_class.size(); ++i) {
    skel->rodata->op_class[i] = static_cast<__u8>(layout.op_class[i]);
  }
  skel->rodata->queue_flag_stats_bit = layout.queue_flag_stats_bit;
  skel->rodata->rqf_stats_mask = layout.rqf_stats_mask;
  skel->rodata->req_nvme_mpath_mask = layout.req_nvme_mpath_mask;
  skel->rodata->force_own_start = options.force_own_start;
  skel->rodata->force_spill = options.force_spill;
  bpf_map__set_max_entries(skel->maps.pw_start, options.max_inflight);
  bpf_map__set_max_entries(skel->maps.pw_io, options.max_devices * kOpCount);
  bpf_map__set_max_entries(skel->maps.pw_path, options.max_devices);
  bpf_map__set_max_entries(skel->maps.pw_disk, options.max_devices);

  bpf_program__set_autoload(skel->progs.pw_issue_btf, use_btf);
  bpf_program__set_autoload(skel->progs.pw_done_btf, use_btf);
  bpf_program__set_autoload(skel->progs.pw_issue_raw, !use_btf);
  bpf_program__set_autoload(skel->progs.pw_done_raw, !use_btf);

  if (int err = pathwise_block__load(skel); err != 0) {
    return LoadError(absl::StrCat("loading the block programs (",
                                  use_btf ? "tp_btf" : "raw_tp", ")"),
                     err, log.c_str());
  }
  if (int err = pathwise_block__attach(skel); err != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "attaching to block_rq_issue/block_rq_complete: ", Errno(err)));
  }
  std::move(destroy).Cancel();
  block = skel;
  mode = use_btf ? "tp_btf" : "raw_tp";
  return absl::OkStatus();
}

absl::Status BpfSampler::Impl::LoadNvme(const NvmeLayout& layout, bool use_btf,
                                        bool in_vmlinux) {
  (void)in_vmlinux;
  std::string log(kLogSize, '\0');
  LIBBPF_OPTS(bpf_object_open_opts, open_opts);
  open_opts.kernel_log_buf = log.data();
  open_opts.kernel_log_size = log.size();
  pathwise_nvme* skel = pathwise_nvme__open_opts(&open_opts);
  if (!skel) {
    return absl::InternalError(
        absl::StrCat("opening the nvme BPF object: ", Errno(errno)));
  }
  absl::Cleanup destroy = [&] { pathwise_nvme__destroy(skel); };
  skel->rodata->request_size = layout.request_size;
  skel->rodata->nvme_retries_off = layout.retries_offset;
  skel->rodata->nvme_status_shift =
      (layout.status_offset - layout.retries_offset) * 8;
  // Share the block object's per-path and counter maps.
  if (int err = bpf_map__reuse_fd(skel->maps.pw_path,
                                  bpf_map__fd(block->maps.pw_path));
      err != 0) {
    return absl::InternalError(absl::StrCat("reusing pw_path: ", Errno(err)));
  }
  if (int err = bpf_map__reuse_fd(skel->maps.pw_counters,
                                  bpf_map__fd(block->maps.pw_counters));
      err != 0) {
    return absl::InternalError(
        absl::StrCat("reusing pw_counters: ", Errno(err)));
  }
  bpf_program__set_autoload(skel->progs.pw_nvme_btf, use_btf);
  bpf_program__set_autoload(skel->progs.pw_nvme_raw, !use_btf);
  if (int err = pathwise_nvme__load(skel); err != 0) {
    return LoadError(absl::StrCat("loading the nvme_complete_rq program (",
                                  use_btf ? "tp_btf" : "raw_tp", ")"),
                     err, log.c_str());
  }
  if (int err = pathwise_nvme__attach(skel); err != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("attaching to nvme_complete_rq: ", Errno(err)));
  }
  std::move(destroy).Cancel();
  nvme = skel;
  return absl::OkStatus();
}

void BpfSampler::Impl::TryAttachNvme() {
  struct btf* vmlinux = btf__load_vmlinux_btf();
  if (!vmlinux) {
    nvme_state = NvmeAttachState::kUnavailable;
    nvme_message = "cannot load vmlinux BTF";
    return;
  }
  absl::Cleanup free_vmlinux = [&] { btf__free(vmlinux); };
  const bool in_vmlinux =
      btf__find_by_name_kind(vmlinux, "nvme_request", BTF_KIND_STRUCT) > 0;
  struct btf* mod = nullptr;
  if (!in_vmlinux) {
    if (access("/sys/module/nvme_core", F_OK) != 0) {
      nvme_state = NvmeAttachState::kNotLoaded;
      nvme_message = "nvme-core is not loaded; will attach when it is";
      return;
    }
    mod = btf__load_module_btf(kNvmeModule, vmlinux);
    if (!mod) {
      nvme_state = NvmeAttachState::kUnavailable;
      nvme_message =
          "no BTF for nvme_core (/sys/kernel/btf/nvme_core; kernel needs "
          "CONFIG_DEBUG_INFO_BTF_MODULES)";
      return;
    }
  }
  absl::Cleanup free_mod = [&] {
    if (mod) btf__free(mod);
  };
  absl::StatusOr<NvmeLayout> layout =
      ReadNvmeLayout(vmlinux, in_vmlinux ? vmlinux : mod);
  if (!layout.ok()) {
    nvme_state = NvmeAttachState::kUnavailable;
    nvme_message = std::string(layout.status().message());
    return;
  }
  std::string why;
  const bool btf_ok =
      ProbeTpBtf("nvme_complete_rq", in_vmlinux ? "" : kNvmeModule, &why);
  absl::Status st = absl::UnknownError("not tried");
  std::string prefix;
  if (btf_ok) {
    st = LoadNvme(*layout, /*use_btf=*/true, in_vmlinux);
    if (!st.ok()) prefix = absl::StrCat("tp_btf failed (", st.message(), "); ");
  } else {
    prefix = absl::StrCat("tp_btf unavailable (", why, "); ");
  }
  if (!nvme) st = LoadNvme(*layout, /*use_btf=*/false, in_vmlinux);
  if (!st.ok()) {
    nvme_state = NvmeAttachState::kUnavailable;
    nvme_message = absl::StrCat(prefix, st.message());
    return;
  }
  nvme_state = NvmeAttachState::kAttached;
  nvme_message = absl::StrCat(prefix, "attached to nvme_complete_rq via ",
                              btf_ok && prefix.empty() ? "tp_btf" : "raw_tp");
}

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

  if (options.enable_bpf_stats) {
    impl->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
    if (impl->stats_fd < 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "BPF_ENABLE_STATS(BPF_STATS_RUN_TIME) failed: ", Errno(errno)));
    }
  }

  std::string why_issue, why_done;
  const bool btf_ok = ProbeTpBtf("block_rq_issue", "", &why_issue) &&
                      ProbeTpBtf("block_rq_complete", "", &why_done);
  absl::Status st;
  if (btf_ok) {
    st = impl->LoadBlock(*layout, /*use_btf=*/true);
    if (!st.ok()) {
      impl->notes.push_back(
          absl::StrCat("tp_btf load failed, using raw_tp: ", st.message()));
    }
  } else {
    impl->notes.push_back(absl::StrCat("tp_btf unavailable (", why_issue,
                                       why_done, "), using raw_tp"));
  }
  if (!impl->block) {
    absl::Status raw = impl->LoadBlock(*layout, /*use_btf=*/false);
    if (!raw.ok()) {
      if (raw.code() == absl::StatusCode::kPermissionDenied) return raw;
      return absl::Status(
          raw.code(),
          absl::StrCat(st.ok() ? "" : absl::StrCat(st.message(), "; "),
                       raw.message()));
    }
  }

  if (options.nvme) {
    impl->TryAttachNvme();
  }
  return std::unique_ptr<BpfSampler>(new BpfSampler(std::move(impl)));
}

BpfSampler::BpfSampler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BpfSampler::~BpfSampler() = default;

const std::string& BpfSampler::block_attach_mode() const { return impl_->mode; }
const std::vector<std::string>& BpfSampler::notes() const {
  return impl_->notes;
}

namespace {

template <typename Skel>
void AppendProgramIds(Skel* skel, std::vector<uint32_t>& out) {
  if (!skel) return;
  struct bpf_program* prog;
  bpf_object__for_each_program(prog, skel->obj) {
    const int fd = bpf_program__fd(prog);
    if (fd < 0) continue;
    if (auto info = GetInfo<bpf_prog_info>(fd); info.ok())
      out.push_back(info->id);
  }
}

template <typename Skel>
void AppendMapIds(Skel* skel, std::vector<uint32_t>& out) {
  if (!skel) return;
  struct bpf_map* map;
  bpf_object__for_each_map(map, skel->obj) {
    const int fd = bpf_map__fd(map);
    if (fd < 0) continue;
    if (auto info = GetInfo<bpf_map_info>(fd); info.ok())
      out.push_back(info->id);
  }
}

void AppendLinkId(struct bpf_link* link, std::vector<uint32_t>& out) {
  if (!link) return;
  if (auto info = GetInfo<bpf_link_info>(bpf_link__fd(link)); info.ok()) {
    out.push_back(info->id);
  }
}

template <typename Skel>
void AppendProgramStats(Skel* skel, std::vector<ProgramStats>& out) {
  if (!skel) return;
  struct bpf_program* prog;
  bpf_object__for_each_program(prog, skel->obj) {
    const int fd = bpf_program__fd(prog);
    if (fd < 0) continue;
    absl::StatusOr<bpf_prog_info> info = GetInfo<bpf_prog_info>(fd);
    if (!info.ok()) continue;
    ProgramStats ps;
    ps.name = info->name;
    ps.attach = bpf_program__section_name(prog);
    ps.id = info->id;
    ps.run_time_ns = info->run_time_ns;
    ps.run_count = info->run_cnt;
    ps.recursion_misses = info->recursion_misses;
    out.push_back(std::move(ps));
  }
}

}  // namespace

std::vector<uint32_t> BpfSampler::ProgramIds() const {
  std::vector<uint32_t> out;
  AppendProgramIds(impl_->block, out);
  AppendProgramIds(impl_->nvme, out);
  return out;
}

std::vector<uint32_t> BpfSampler::MapIds() const {
  std::vector<uint32_t> out;
  AppendMapIds(impl_->block, out);
  AppendMapIds(impl_->nvme, out);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<uint32_t> BpfSampler::LinkIds() const {
  std::vector<uint32_t> out;
  if (pathwise_block* b = impl_->block) {
    AppendLinkId(b->links.pw_issue_btf, out);
    AppendLinkId(b->links.pw_done_btf, out);
    AppendLinkId(b->links.pw_issue_raw, out);
    AppendLinkId(b->links.pw_done_raw, out);
  }
  if (pathwise_nvme* n = impl_->nvme) {
    AppendLinkId(n->links.pw_nvme_btf, out);
    AppendLinkId(n->links.pw_nvme_raw, out);
  }
  return out;
}

absl::StatusOr<SamplerSnapshot> BpfSampler::Read() {
  Impl& im = *impl_;
  if (im.options.nvme && im.nvme_state == NvmeAttachState::kNotLoaded &&
      access("/sys/module/nvme_core", F_OK) == 0) {
    im.TryAttachNvme();
  }

  SamplerSnapshot snap;
  snap.nvme_state = im.nvme_state;
  snap.nvme_status_message = im.nvme_message;
  snap.bpf_stats_enabled = im.stats_fd >= 0 || ReadBpfStatsSysctl();

  // dev_t -> disk name (slow-path records of the kernel side).
  std::map<uint32_t, std::string> names;
  {
    const int fd = bpf_map__fd(im.block->maps.pw_disk);
    __u32 key = 0, next = 0;
    __u32* prev = nullptr;
    while (bpf_map_get_next_key(fd, prev, &next) == 0) {
      pw_disk_name n = {};
      if (bpf_map_lookup_elem(fd, &next, &n) == 0) {
        names[next] = std::string(n.name, strnlen(n.name, sizeof(n.name)));
      }
      key = next;
      prev = &key;
    }
  }
  auto name_of = [&names](uint32_t dev) {
    auto it = names.find(dev);
    return it == names.end() ? std::string() : it->second;
  };

  // (dev, op) -> totals over CPUs, from pw_io and the spill slots (where a
  // completion went when its pw_io entry could not be created).
  uint64_t own_start = 0, kernel_start = 0;
  std::map<std::pair<uint32_t, uint32_t>, DeviceIo> io;
  auto add = [&](const pw_io_key& k, const pw_io_val& v) {
    DeviceIo& d = io[{k.dev, k.op}];
    d.stats.completed += v.count;
    d.stats.bytes += v.bytes;
    d.stats.latency_sum_ns += v.lat_sum_ns;
    d.stats.errors += v.errors;
    own_start += v.own_start;
    kernel_start += v.count - v.own_start;
    for (size_t i = 0; i < LatencyHistogram::kBuckets; ++i) {
      d.stats.latency.AddToBucket(i, v.buckets[i]);
    }
  };
  absl::Status st = ForEachPerCpu<pw_io_key, pw_io_val>(
      bpf_map__fd(im.block->maps.pw_io), im.ncpus,
      [&](const pw_io_key& k, const std::vector<pw_io_val>& vals) {
        for (const pw_io_val& v : vals) add(k, v);
      });
  if (!st.ok()) return st;
  {
    std::vector<pw_io_spill> slots(static_cast<size_t>(im.ncpus));
    const int fd = bpf_map__fd(im.block->maps.pw_io_spill);
    for (__u32 i = 0; i < PW_SPILL_SLOTS; ++i) {
      if (bpf_map_lookup_elem(fd, &i, slots.data()) != 0) {
        return absl::InternalError(
            absl::StrCat("reading pw_io_spill: ", Errno(errno)));
      }
      for (const pw_io_spill& sl : slots) {
        if (sl.used) add(sl.key, sl.val);
      }
    }
  }
  for (auto& [key, d] : io) {
    d.dev = DeviceNumber::FromKernel(key.first);
    d.disk = name_of(key.first);
    d.op = key.second < kOpCount ? static_cast<Op>(key.second) : Op::kOther;
    snap.io.push_back(std::move(d));
  }
  std::sort(snap.io.begin(), snap.io.end(),
            [](const DeviceIo& a, const DeviceIo& b) {
              return std::tie(a.dev, a.op) < std::tie(b.dev, b.op);
            });

  st = ForEachPerCpu<__u32, pw_path_val>(
      bpf_map__fd(im.block->maps.pw_path), im.ncpus,
      [&](const __u32& dev, const std::vector<pw_path_val>& vals) {
        PathNvmeStats p;
        p.dev = DeviceNumber::FromKernel(dev);
        p.disk = name_of(dev);
        for (const pw_path_val& v : vals) {
          for (size_t i = 0; i < kNvmeErrorClassCount; ++i) {
            p.errors_by_class[i] += v.nvme_errors[i];
          }
          p.retries += v.retries;
          p.failovers += v.failovers;
        }
        snap.paths.push_back(p);
      });
  if (!st.ok()) return st;
  std::sort(snap.paths.begin(), snap.paths.end(),
            [](const PathNvmeStats& a, const PathNvmeStats& b) {
              return a.dev < b.dev;
            });

  {
    std::vector<pw_counters> vals(static_cast<size_t>(im.ncpus));
    __u32 zero = 0;
    if (bpf_map_lookup_elem(bpf_map__fd(im.block->maps.pw_counters), &zero,
                            vals.data()) != 0) {
      return absl::InternalError(
          absl::StrCat("reading pw_counters: ", Errno(errno)));
    }
    pw_counters sum = {};
    for (const pw_counters& c : vals) {
      for (int i = 0; i < PW_CNT_COUNT; ++i) sum.v[i] += c.v[i];
    }
    snap.start_from_kernel = kernel_start;
    snap.start_from_own = own_start;
    snap.nvme_no_disk = sum.v[PW_CNT_NVME_NO_DISK];
    auto drop = [&](DropReason r) -> uint64_t& {
      return snap.dropped[static_cast<size_t>(r)];
    };
    drop(DropReason::kStartMapFull) = sum.v[PW_CNT_DROP_START_FULL];
    drop(DropReason::kNoStartTime) = sum.v[PW_CNT_DROP_NO_START];
    drop(DropReason::kIoMapFull) = sum.v[PW_CNT_DROP_IO_FULL];
    drop(DropReason::kPathMapFull) =
        sum.v[PW_CNT_DROP_PATH_FULL] + sum.v[PW_CNT_DROP_NVME_PATH_FULL];
  }

  AppendProgramStats(im.block, snap.programs);
  AppendProgramStats(im.nvme, snap.programs);
  uint64_t recursion = 0;
  for (const ProgramStats& p : snap.programs) recursion += p.recursion_misses;
  snap.dropped[static_cast<size_t>(DropReason::kRecursion)] = recursion;
  return snap;
}

}  // namespace pathwise::bpf

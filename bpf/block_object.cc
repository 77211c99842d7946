#include "bpf/block_object.h"

#include <algorithm>
#include <cstring>
#include <tuple>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "bpf/object_util.h"
#include "pathwise_block.skel.h"

namespace pathwise::bpf {

absl::StatusOr<std::unique_ptr<BlockObject>> BlockObject::LoadMode(
    const BlockLayout& layout, const BlockOptions& options, int ncpus,
    bool use_btf) {
  std::string log(kVerifierLogSize, '\0');
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
  skel->rodata->force_spill_dev = options.force_spill_dev;
  bpf_map__set_max_entries(skel->maps.pw_start, options.max_inflight);
  bpf_map__set_max_entries(skel->maps.pw_io, options.max_devices * PW_OP_COUNT);
  bpf_map__set_max_entries(skel->maps.pw_path, options.max_devices);
  bpf_map__set_max_entries(skel->maps.pw_disk, options.max_devices);

  bpf_program__set_autoload(skel->progs.pw_issue_btf, use_btf);
  bpf_program__set_autoload(skel->progs.pw_done_btf, use_btf);
  bpf_program__set_autoload(skel->progs.pw_issue_raw, !use_btf);
  bpf_program__set_autoload(skel->progs.pw_done_raw, !use_btf);

  const char* mode = use_btf ? "tp_btf" : "raw_tp";
  if (int err = pathwise_block__load(skel); err != 0) {
    return LoadError(absl::StrCat("loading the block programs (", mode, ")"),
                     err, log.c_str());
  }
  if (int err = pathwise_block__attach(skel); err != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "attaching to block_rq_issue/block_rq_complete: ", Errno(err)));
  }
  std::move(destroy).Cancel();
  return std::unique_ptr<BlockObject>(new BlockObject(skel, mode, ncpus));
}

absl::StatusOr<std::unique_ptr<BlockObject>> BlockObject::Load(
    const BlockLayout& layout, const BlockOptions& options, int ncpus,
    std::vector<std::string>& notes) {
  std::string why_issue, why_done;
  const bool btf_ok = ProbeTpBtf("block_rq_issue", "", &why_issue) &&
                      ProbeTpBtf("block_rq_complete", "", &why_done);
  absl::Status btf_status;
  if (btf_ok) {
    absl::StatusOr<std::unique_ptr<BlockObject>> obj =
        LoadMode(layout, options, ncpus, /*use_btf=*/true);
    if (obj.ok()) return obj;
    btf_status = obj.status();
    notes.push_back(absl::StrCat("tp_btf load failed, using raw_tp: ",
                                 btf_status.message()));
  } else {
    notes.push_back(absl::StrCat("tp_btf unavailable (", why_issue, why_done,
                                 "), using raw_tp"));
  }
  absl::StatusOr<std::unique_ptr<BlockObject>> raw =
      LoadMode(layout, options, ncpus, /*use_btf=*/false);
  if (raw.ok()) return raw;
  if (raw.status().code() == absl::StatusCode::kPermissionDenied) return raw;
  return absl::Status(
      raw.status().code(),
      absl::StrCat(
          btf_status.ok() ? "" : absl::StrCat(btf_status.message(), "; "),
          raw.status().message()));
}

BlockObject::~BlockObject() {
  // Links first (detach), then programs and maps: all by closing fds;
  // nothing was pinned, so nothing outlives this call.
  pathwise_block__destroy(skel_);
}

int BlockObject::path_map_fd() const {
  return bpf_map__fd(skel_->maps.pw_path);
}
int BlockObject::counters_map_fd() const {
  return bpf_map__fd(skel_->maps.pw_counters);
}

void BlockObject::AppendIds(ObjectIds& out) const {
  AppendObjectIds(skel_->obj, out);
  AppendLinkId(skel_->links.pw_issue_btf, out);
  AppendLinkId(skel_->links.pw_done_btf, out);
  AppendLinkId(skel_->links.pw_issue_raw, out);
  AppendLinkId(skel_->links.pw_done_raw, out);
}

absl::Status BlockObject::ReadIo(BlockSample& out) const {
  // (dev, op) -> totals over CPUs, from pw_io and the spill slots (where a
  // completion went when its pw_io entry could not be created).
  std::map<std::pair<uint32_t, uint32_t>, model::OpStats> io;
  auto add = [&](const pw_io_key& k, const pw_io_val& v) {
    model::OpStats& s = io[{k.dev, k.op}];
    s.completed += v.count;
    s.bytes += v.bytes;
    s.time_ns += v.lat_sum_ns;
    s.errors = s.errors.value_or(0) + v.errors;
    if (!s.latency) s.latency.emplace();
    out.start_from_own += v.own_start;
    out.start_from_kernel += v.count - v.own_start;
    for (size_t i = 0; i < LatencyHistogram::kBuckets; ++i) {
      s.latency->AddToBucket(i, v.buckets[i]);
    }
  };
  absl::Status st = ForEachPerCpu<pw_io_key, pw_io_val>(
      bpf_map__fd(skel_->maps.pw_io), ncpus_,
      [&](const pw_io_key& k, const std::vector<pw_io_val>& vals) {
        for (const pw_io_val& v : vals) add(k, v);
      });
  if (!st.ok()) return st;
  std::vector<pw_io_spill> slots(static_cast<size_t>(ncpus_));
  const int spill_fd = bpf_map__fd(skel_->maps.pw_io_spill);
  for (__u32 i = 0; i < PW_SPILL_SLOTS; ++i) {
    if (bpf_map_lookup_elem(spill_fd, &i, slots.data()) != 0) {
      return absl::InternalError(
          absl::StrCat("reading pw_io_spill: ", Errno(errno)));
    }
    for (const pw_io_spill& sl : slots) {
      if (sl.used) add(sl.key, sl.val);
    }
  }
  for (auto& [key, stats] : io) {
    DeviceIo d;
    d.dev = model::DevId::FromKernel(key.first);
    if (auto it = out.disk_names.find(key.first); it != out.disk_names.end()) {
      d.disk = it->second;
    }
    d.op = key.second < model::kOpCount ? static_cast<model::Op>(key.second)
                                        : model::Op::kOther;
    d.stats = std::move(stats);
    out.io.push_back(std::move(d));
  }
  std::sort(out.io.begin(), out.io.end(),
            [](const DeviceIo& a, const DeviceIo& b) {
              return std::tie(a.dev, a.op) < std::tie(b.dev, b.op);
            });
  return absl::OkStatus();
}

absl::StatusOr<BlockSample> BlockObject::Read() const {
  BlockSample out;
  // dev_t -> disk name (slow-path records of the kernel side).
  const int disk_fd = bpf_map__fd(skel_->maps.pw_disk);
  __u32 key = 0, next = 0;
  __u32* prev = nullptr;
  while (bpf_map_get_next_key(disk_fd, prev, &next) == 0) {
    pw_disk_name n = {};
    if (bpf_map_lookup_elem(disk_fd, &next, &n) == 0) {
      out.disk_names[next] =
          std::string(n.name, strnlen(n.name, sizeof(n.name)));
    }
    key = next;
    prev = &key;
  }

  if (absl::Status st = ReadIo(out); !st.ok()) return st;

  absl::StatusOr<std::map<uint32_t, pw_path_val>> paths =
      ReadPathMap(path_map_fd());
  if (!paths.ok()) return paths.status();
  for (const auto& [dev, v] : *paths) {
    PathCounters& p = out.paths[dev];
    p.failovers = v.failovers;
    for (size_t i = 0; i < kNvmeErrorClassCount; ++i) {
      p.errors_by_class[i] = v.nvme_errors[i];
    }
    p.retries = v.retries;
  }

  absl::StatusOr<pw_counters> c = ReadCounters(counters_map_fd(), ncpus_);
  if (!c.ok()) return c.status();
  out.dropped_start_map_full = c->v[PW_CNT_DROP_START_FULL];
  out.dropped_no_start_time = c->v[PW_CNT_DROP_NO_START];
  out.dropped_io_map_full = c->v[PW_CNT_DROP_IO_FULL];
  out.dropped_path_map_full = c->v[PW_CNT_DROP_PATH_FULL];
  out.dropped_nvme_path_map_full = c->v[PW_CNT_DROP_NVME_PATH_FULL];

  AppendProgramStats(skel_->obj, out.programs);
  return out;
}

}  // namespace pathwise::bpf

// SPDX-License-Identifier: Apache-2.0
#include "bpf/block_object.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

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

  KeepSettingsUnmapped(skel->maps.rodata);
  for (size_t i = 0; i < layout.op_class.size(); ++i) {
    skel->rodata->op_class[i] = static_cast<__u8>(layout.op_class[i]);
  }
  skel->rodata->queue_flag_stats_bit = layout.queue_flag_stats_bit;
  skel->rodata->rqf_stats_mask = layout.rqf_stats_mask;
  skel->rodata->req_nvme_mpath_mask = layout.req_nvme_mpath_mask;
  skel->rodata->force_own_start = options.force_own_start;
  skel->rodata->force_spill = options.force_spill;
  skel->rodata->force_spill_dev = options.force_spill_dev;
  skel->rodata->queues = options.hctx_slots > 0;
  skel->rodata->hctx_slots = std::max<uint32_t>(options.hctx_slots, 1);
  bpf_map__set_max_entries(skel->maps.pw_hctx,
                           std::max<uint32_t>(options.hctx_slots, 1));
  bpf_map__set_max_entries(skel->maps.pw_hctx_slot,
                           options.hctx_slots > 0 ? options.max_devices : 1);
  // pw_start: lines of PW_START_SLOTS slots, a power of two of them (the
  // programs mask the index), max_inflight slots in all, rounded up.
  const uint32_t start_lines = std::bit_ceil(std::max<uint32_t>(
      (options.max_inflight + PW_START_SLOTS - 1) / PW_START_SLOTS, 1));
  skel->rodata->start_line_mask = start_lines - 1;
  bpf_map__set_max_entries(skel->maps.pw_start, start_lines);
  bpf_map__set_max_entries(skel->maps.pw_io, options.max_devices * PW_OP_COUNT);
  const uint32_t io_slots =
      std::bit_ceil(std::max<uint32_t>(options.io_slots, 1));
  skel->rodata->io_slots = options.io_slots > 0;
  skel->rodata->io_slot_mask = io_slots - 1;
  bpf_map__set_max_entries(skel->maps.pw_io_owner, io_slots);
  bpf_map__set_max_entries(skel->maps.pw_io_slot, io_slots);
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
  return std::unique_ptr<BlockObject>(
      new BlockObject(skel, mode, ncpus, options.hctx_slots,
                      options.io_slots > 0 ? io_slots : 0));
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

absl::StatusOr<BlockMaps> BlockObject::ReadMaps() const {
  BlockMapDecoder dec(ncpus_);
  const size_t ncpus = static_cast<size_t>(ncpus_);
  auto map_sizes = [](const bpf_map* m) {
    return std::pair<size_t, size_t>(bpf_map__key_size(m),
                                     bpf_map__value_size(m));
  };
  auto read = [&](const bpf_map* m, const char* name, size_t copies,
                  auto add) -> absl::Status {
    const auto [key_size, value_size] = map_sizes(m);
    absl::Status st = ForEachEntry(
        bpf_map__fd(m), key_size,
        copies == 1 ? value_size : copies * PerCpuStride(value_size),
        [&](MapBytes k, MapBytes v) { return (dec.*add)(k, v); });
    if (!st.ok()) {
      return absl::Status(st.code(),
                          absl::StrCat("reading ", name, ": ", st.message()));
    }
    return absl::OkStatus();
  };
  if (absl::Status st = read(skel_->maps.pw_disk, "pw_disk", 1,
                             &BlockMapDecoder::AddDiskName);
      !st.ok()) {
    return st;
  }
  if (absl::Status st =
          read(skel_->maps.pw_io, "pw_io", ncpus, &BlockMapDecoder::AddIo);
      !st.ok()) {
    return st;
  }
  if (absl::Status st =
          read(skel_->maps.pw_path, "pw_path", 1, &BlockMapDecoder::AddPath);
      !st.ok()) {
    return st;
  }
  // The spill slots (where a completion went when its pw_io entry could
  // not be created) and the counters: per-CPU arrays, read by index.
  auto read_index = [&](const bpf_map* m, const char* name, __u32 index,
                        std::vector<uint8_t>& buf) -> absl::Status {
    buf.assign(ncpus * PerCpuStride(bpf_map__value_size(m)), 0);
    if (bpf_map_lookup_elem(bpf_map__fd(m), &index, buf.data()) != 0) {
      return absl::InternalError(
          absl::StrCat("reading ", name, ": ", Errno(errno)));
    }
    return absl::OkStatus();
  };
  std::vector<uint8_t> buf;
  for (__u32 i = 0; i < io_slots_; ++i) {
    pw_io_owner owner = {};
    if (bpf_map_lookup_elem(bpf_map__fd(skel_->maps.pw_io_owner), &i, &owner) !=
        0) {
      return absl::InternalError(
          absl::StrCat("reading pw_io_owner: ", Errno(errno)));
    }
    buf.clear();
    if (owner.devop != 0 && owner.devop != PW_IO_SLOT_RETIRING) {
      if (absl::Status st =
              read_index(skel_->maps.pw_io_slot, "pw_io_slot", i, buf);
          !st.ok()) {
        return st;
      }
    }
    const MapBytes owner_bytes(reinterpret_cast<const uint8_t*>(&owner),
                               sizeof(owner));
    if (absl::Status st = dec.AddIoSlot(i, owner_bytes, buf); !st.ok()) {
      return st;
    }
  }
  for (__u32 i = 0; i < PW_SPILL_SLOTS; ++i) {
    if (absl::Status st =
            read_index(skel_->maps.pw_io_spill, "pw_io_spill", i, buf);
        !st.ok()) {
      return st;
    }
    if (absl::Status st = dec.AddSpillSlot(buf); !st.ok()) return st;
  }
  if (absl::Status st =
          read_index(skel_->maps.pw_counters, "pw_counters", 0, buf);
      !st.ok()) {
    return st;
  }
  if (absl::Status st = dec.SetCounters(buf); !st.ok()) return st;
  return std::move(dec).Take();
}

void BlockObject::RetireGone(const std::set<DiskKey>& gone, BlockMaps& maps) {
  // A gone disk does no more I/O, so reading its entries and then deleting
  // them loses nothing. An entry whose delete failed stays in the maps and
  // in the sample, and is retried on the next read.
  auto del = [](int fd, const void* key) {
    return bpf_map_delete_elem(fd, key) == 0 || errno == ENOENT;
  };
  std::set<IoKey> io;
  std::set<DiskKey> paths;
  std::set<DiskKey> kept;  // a gone disk with an entry that stays
  for (const auto& [k, v] : maps.io) {
    if (!gone.contains(k.disk)) continue;
    const pw_io_key raw = {.dev = k.disk.dev, .op = k.op, .seq = k.disk.seq};
    // The slot first: if it cannot be marked retiring, the key keeps its
    // slot and its hash entry, and is retried whole on the next read (a
    // delete from the hash fails only on a malformed key).
    auto slot = maps.io_slot.find(k);
    if ((slot == maps.io_slot.end() || FreeIoSlot(slot->second)) &&
        del(bpf_map__fd(skel_->maps.pw_io), &raw)) {
      io.insert(k);
    } else {
      kept.insert(k.disk);
    }
  }
  for (const auto& [k, v] : maps.paths) {
    if (!gone.contains(k)) continue;
    const pw_disk_key raw = {.dev = k.dev, .pad = 0, .seq = k.seq};
    if (del(path_map_fd(), &raw)) {
      paths.insert(k);
    } else {
      kept.insert(k);
    }
  }
  retired_.Retire(gone, io, paths, maps);
  for (const DiskKey& k : gone) {
    if (kept.contains(k) || !maps.names.contains(k)) continue;
    const pw_disk_key raw = {.dev = k.dev, .pad = 0, .seq = k.seq};
    if (del(bpf_map__fd(skel_->maps.pw_disk), &raw)) maps.names.erase(k);
  }
  retired_.Prune(maps);
}

bool BlockObject::FreeIoSlot(uint32_t index) {
  // Only a gone disk's slot is freed, and no program writes it: they write
  // a slot only while its owner holds their key. Retiring first, so that
  // no claim takes the slot while its values are being zeroed. Once
  // retiring, the slot is never read again (its counts are the tally's);
  // a later step that fails leaves it retiring, finished on a later read.
  const int owner_fd = bpf_map__fd(skel_->maps.pw_io_owner);
  pw_io_owner o = {.seq = 0, .devop = PW_IO_SLOT_RETIRING};
  if (bpf_map_update_elem(owner_fd, &index, &o, BPF_ANY) != 0) return false;
  FinishIoSlot(index);
  return true;
}

void BlockObject::FinishIoSlot(uint32_t index) {
  std::vector<uint8_t> zero(
      static_cast<size_t>(ncpus_) * PerCpuStride(sizeof(pw_io_val)), 0);
  if (bpf_map_update_elem(bpf_map__fd(skel_->maps.pw_io_slot), &index,
                          zero.data(), BPF_ANY) != 0) {
    return;
  }
  // seq is written before devop (pathwise_bpf.h): a claim that follows the
  // free finds seq 0 already written.
  const pw_io_owner o = {.seq = 0, .devop = 0};
  bpf_map_update_elem(bpf_map__fd(skel_->maps.pw_io_owner), &index, &o,
                      BPF_ANY);
}

absl::Status BlockObject::ReadHctx(const BlockMaps& maps,
                                   const std::set<DiskKey>& gone,
                                   BlockSample& out) const {
  out.hctx_on = true;
  std::vector<std::pair<DiskKey, HctxRange>> ranges;
  absl::Status st = ForEachEntry(
      bpf_map__fd(skel_->maps.pw_hctx_slot), sizeof(pw_disk_key),
      sizeof(pw_hctx_range), [&](MapBytes k, MapBytes v) -> absl::Status {
        pw_disk_key key;
        std::memcpy(&key, k.data(), sizeof(key));
        absl::StatusOr<HctxRange> r = DecodeHctxRange(v, hctx_slots_);
        if (!r.ok()) return r.status();
        ranges.emplace_back(DiskKey{key.dev, key.seq}, *r);
        return absl::OkStatus();
      });
  if (!st.ok()) {
    return absl::Status(st.code(),
                        absl::StrCat("reading pw_hctx_slot: ", st.message()));
  }
  std::vector<uint8_t> buf;
  uint64_t saturated = 0;
  for (const auto& [disk, r] : ranges) {
    // A gone disk does no more I/O, and its name is no longer known.
    if (!r.ready || gone.contains(disk)) continue;
    auto name = maps.names.find(disk);
    for (uint32_t i = 0; i < r.n; ++i) {
      __u32 index = r.base + i;
      buf.assign(
          static_cast<size_t>(ncpus_) * PerCpuStride(sizeof(pw_hctx_val)), 0);
      if (bpf_map_lookup_elem(bpf_map__fd(skel_->maps.pw_hctx), &index,
                              buf.data()) != 0) {
        return absl::InternalError(
            absl::StrCat("reading pw_hctx: ", Errno(errno)));
      }
      absl::StatusOr<HctxTotals> t = SumHctxSlot(buf, ncpus_, saturated);
      if (!t.ok()) return t.status();
      out.hctx.push_back(
          {.key = disk,
           .disk = name == maps.names.end() ? std::string() : name->second,
           .hctx = static_cast<int>(i),
           .totals = *t});
    }
  }
  std::sort(out.hctx.begin(), out.hctx.end(),
            [](const DiskHctxIo& a, const DiskHctxIo& b) {
              return std::tie(a.key, a.hctx) < std::tie(b.key, b.hctx);
            });
  return absl::OkStatus();
}

absl::StatusOr<BlockSample> BlockObject::Read() {
  absl::StatusOr<BlockMaps> maps = ReadMaps();
  if (!maps.ok()) return maps.status();
  const std::set<DiskKey> gone = SupersededDisks(*maps);
  // Slots a failed step left retiring (FreeIoSlot) are finished first.
  for (uint32_t index : maps->io_slot_retiring) FinishIoSlot(index);
  if (!gone.empty()) RetireGone(gone, *maps);
  BlockSample out = AssembleSample(*maps, retired_);
  if (hctx_slots_ > 0) {
    if (absl::Status st = ReadHctx(*maps, gone, out); !st.ok()) return st;
  }
  AppendProgramStats(skel_->obj, out.programs);
  return out;
}

}  // namespace pathwise::bpf

// SPDX-License-Identifier: Apache-2.0
#include "bpf/map_decode.h"

#include <algorithm>
#include <cstring>
#include <tuple>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "bpf/saturating.h"

extern "C" {
#include "bpf/pathwise_bpf.h"
}

namespace pathwise::bpf {
namespace {

static_assert(sizeof(pw_io_val::buckets) / sizeof(__u64) ==
              LatencyHistogram::kBuckets);
static_assert(sizeof(pw_path_val::nvme_errors) / sizeof(__u64) ==
              kNvmeErrorClassCount);

// The bytes as a T (trivially copyable; any bytes are a valid T).
template <typename T>
T As(const uint8_t* p) {
  static_assert(std::is_trivially_copyable_v<T>);
  T t;
  std::memcpy(&t, p, sizeof(T));
  return t;
}

absl::Status SizeError(const char* map, const char* what, size_t got,
                       size_t want) {
  return absl::InvalidArgumentError(absl::StrCat(
      map, ": ", what, " of ", got, " bytes, the layout's is ", want));
}

template <typename T>
absl::StatusOr<T> Exact(const char* map, const char* what, MapBytes bytes) {
  if (bytes.size() != sizeof(T)) {
    return SizeError(map, what, bytes.size(), sizeof(T));
  }
  return As<T>(bytes.data());
}

absl::StatusOr<DiskKey> DecodeDiskKey(const char* map, MapBytes bytes) {
  absl::StatusOr<pw_disk_key> k = Exact<pw_disk_key>(map, "key", bytes);
  if (!k.ok()) return k.status();
  if (k->pad != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(map, ": key with non-zero padding ", k->pad));
  }
  return DiskKey{k->dev, k->seq};
}

// A kernel disk name: printable ASCII without '/', as sysfs names are.
bool ValidName(const char* s, size_t n) {
  if (n == 0) return false;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c <= 0x20 || c >= 0x7f || c == '/') return false;
  }
  return true;
}

void AddTotals(IoTotals& t, const IoTotals& v, uint64_t& saturated) {
  SatAdd(t.count, v.count, saturated);
  SatAdd(t.bytes, v.bytes, saturated);
  SatAdd(t.lat_sum_ns, v.lat_sum_ns, saturated);
  SatAdd(t.errors, v.errors, saturated);
  SatAdd(t.own_start, v.own_start, saturated);
  for (size_t i = 0; i < t.buckets.size(); ++i) {
    SatAdd(t.buckets[i], v.buckets[i], saturated);
  }
}

void AddVal(IoTotals& t, const pw_io_val& v, uint64_t& saturated) {
  IoTotals x;
  x.count = v.count;
  x.bytes = v.bytes;
  x.lat_sum_ns = v.lat_sum_ns;
  x.errors = v.errors;
  x.own_start = v.own_start;
  std::copy(std::begin(v.buckets), std::end(v.buckets), x.buckets.begin());
  AddTotals(t, x, saturated);
}

void AddPathCounters(PathCounters& p, const PathCounters& v) {
  uint64_t ignored = 0;
  SatAdd(p.failovers, v.failovers, ignored);
  SatAdd(p.retries, v.retries, ignored);
  for (size_t i = 0; i < p.errors_by_class.size(); ++i) {
    SatAdd(p.errors_by_class[i], v.errors_by_class[i], ignored);
  }
}

model::OpStats ToOpStats(const IoTotals& t) {
  model::OpStats s;
  s.completed = t.count;
  s.bytes = t.bytes;
  s.time_ns = t.lat_sum_ns;
  s.errors = t.errors;
  s.latency.emplace();
  for (size_t i = 0; i < t.buckets.size(); ++i) {
    s.latency->AddToBucket(i, t.buckets[i]);
  }
  return s;
}

model::Op ToOp(uint32_t op) {
  return op < model::kOpCount ? static_cast<model::Op>(op) : model::Op::kOther;
}

// The tally's key of a disk: its name, else its dev_t ("259:3").
std::string TallyName(const std::string& name, uint32_t dev) {
  return name.empty() ? model::ToString(model::DevId::FromKernel(dev)) : name;
}

}  // namespace

absl::Status BlockMapDecoder::CheckPerCpu(const char* map, MapBytes values,
                                          size_t value_size) const {
  if (ncpus_ <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(map, ": CPU count ", ncpus_, " is not positive"));
  }
  const size_t want = static_cast<size_t>(ncpus_) * PerCpuStride(value_size);
  if (values.size() != want) {
    return absl::InvalidArgumentError(absl::StrCat(
        map, ": per-CPU value of ", values.size(), " bytes, the layout's is ",
        ncpus_, " x ", PerCpuStride(value_size), " = ", want));
  }
  return absl::OkStatus();
}

absl::Status BlockMapDecoder::AddDiskName(MapBytes key, MapBytes value) {
  absl::StatusOr<DiskKey> k = DecodeDiskKey("pw_disk", key);
  if (!k.ok()) return k.status();
  absl::StatusOr<pw_disk_name> n =
      Exact<pw_disk_name>("pw_disk", "value", value);
  if (!n.ok()) return n.status();
  const void* nul = std::memchr(n->name, '\0', sizeof(n->name));
  const size_t len =
      nul ? static_cast<const char*>(nul) - n->name : sizeof(n->name);
  std::string name;
  if (nul && ValidName(n->name, len)) {
    name.assign(n->name, len);
  } else {
    ++maps_.bad_names;
  }
  maps_.names[*k] = std::move(name);
  return absl::OkStatus();
}

absl::Status BlockMapDecoder::AddIo(MapBytes key, MapBytes values) {
  absl::StatusOr<pw_io_key> k = Exact<pw_io_key>("pw_io", "key", key);
  if (!k.ok()) return k.status();
  if (absl::Status st = CheckPerCpu("pw_io", values, sizeof(pw_io_val));
      !st.ok()) {
    return st;
  }
  if (k->op >= PW_OP_COUNT) ++maps_.unknown_ops;
  IoTotals& t = maps_.io[IoKey{{k->dev, k->seq}, k->op}];
  const size_t stride = PerCpuStride(sizeof(pw_io_val));
  for (size_t off = 0; off < values.size(); off += stride) {
    AddVal(t, As<pw_io_val>(values.data() + off), maps_.saturated);
  }
  return absl::OkStatus();
}

absl::Status BlockMapDecoder::AddIoSlot(uint32_t index, MapBytes owner,
                                        MapBytes values) {
  absl::StatusOr<pw_io_owner> o =
      Exact<pw_io_owner>("pw_io_owner", "value", owner);
  if (!o.ok()) return o.status();
  if (o->devop == 0) return absl::OkStatus();
  if (o->devop == PW_IO_SLOT_RETIRING) {
    maps_.io_slot_retiring.push_back(index);
    return absl::OkStatus();
  }
  if (absl::Status st = CheckPerCpu("pw_io_slot", values, sizeof(pw_io_val));
      !st.ok()) {
    return st;
  }
  const IoKey k{{static_cast<uint32_t>(o->devop >> 32), o->seq},
                static_cast<uint32_t>(o->devop)};
  if (k.op >= PW_OP_COUNT) ++maps_.unknown_ops;
  if (!maps_.io_slot.emplace(k, index).second) {
    return absl::InvalidArgumentError(absl::StrCat(
        "pw_io_owner: slots ", maps_.io_slot[k], " and ", index,
        " both owned by ", k.disk.dev, "/", k.disk.seq, "/", k.op));
  }
  IoTotals& t = maps_.io[k];
  const size_t stride = PerCpuStride(sizeof(pw_io_val));
  for (size_t off = 0; off < values.size(); off += stride) {
    AddVal(t, As<pw_io_val>(values.data() + off), maps_.saturated);
  }
  return absl::OkStatus();
}

absl::Status BlockMapDecoder::AddSpillSlot(MapBytes values) {
  if (absl::Status st = CheckPerCpu("pw_io_spill", values, sizeof(pw_io_spill));
      !st.ok()) {
    return st;
  }
  const size_t stride = PerCpuStride(sizeof(pw_io_spill));
  for (size_t off = 0; off < values.size(); off += stride) {
    const pw_io_spill sl = As<pw_io_spill>(values.data() + off);
    if (!sl.used) continue;
    if (sl.key.op >= PW_OP_COUNT) ++maps_.unknown_ops;
    AddVal(maps_.spill[IoKey{{sl.key.dev, sl.key.seq}, sl.key.op}], sl.val,
           maps_.saturated);
  }
  return absl::OkStatus();
}

absl::Status BlockMapDecoder::AddPath(MapBytes key, MapBytes value) {
  absl::StatusOr<DiskKey> k = DecodeDiskKey("pw_path", key);
  if (!k.ok()) return k.status();
  absl::StatusOr<pw_path_val> v = Exact<pw_path_val>("pw_path", "value", value);
  if (!v.ok()) return v.status();
  PathCounters c;
  c.failovers = v->failovers;
  c.retries = v->retries;
  for (size_t i = 0; i < kNvmeErrorClassCount; ++i) {
    c.errors_by_class[i] = v->nvme_errors[i];
  }
  AddPathCounters(maps_.paths[*k], c);
  return absl::OkStatus();
}

absl::Status BlockMapDecoder::SetCounters(MapBytes values) {
  if (absl::Status st = CheckPerCpu("pw_counters", values, sizeof(pw_counters));
      !st.ok()) {
    return st;
  }
  pw_counters sum = {};
  const size_t stride = PerCpuStride(sizeof(pw_counters));
  for (size_t off = 0; off < values.size(); off += stride) {
    const pw_counters c = As<pw_counters>(values.data() + off);
    for (int i = 0; i < PW_CNT_COUNT; ++i) {
      uint64_t v = sum.v[i];
      SatAdd(v, c.v[i], maps_.saturated);
      sum.v[i] = v;
    }
  }
  maps_.dropped_start_map_full = sum.v[PW_CNT_DROP_START_FULL];
  maps_.dropped_no_start_time = sum.v[PW_CNT_DROP_NO_START];
  maps_.dropped_io_map_full = sum.v[PW_CNT_DROP_IO_FULL];
  maps_.dropped_path_map_full = sum.v[PW_CNT_DROP_PATH_FULL];
  maps_.dropped_nvme_path_map_full = sum.v[PW_CNT_DROP_NVME_PATH_FULL];
  maps_.dropped_hctx = sum.v[PW_CNT_DROP_HCTX];
  maps_.dropped_start_collision = sum.v[PW_CNT_DROP_START_COLLISION];
  return absl::OkStatus();
}

std::set<DiskKey> SupersededDisks(const BlockMaps& maps) {
  std::set<DiskKey> keys;
  for (const auto& [k, n] : maps.names) keys.insert(k);
  for (const auto& [k, v] : maps.io) keys.insert(k.disk);
  for (const auto& [k, v] : maps.spill) keys.insert(k.disk);
  for (const auto& [k, v] : maps.paths) keys.insert(k);
  // The newest diskseq per dev_t and per name.
  std::map<uint32_t, uint64_t> newest_by_dev;
  std::map<std::string, uint64_t> newest_by_name;
  for (const DiskKey& k : keys) {
    uint64_t& d = newest_by_dev[k.dev];
    d = std::max(d, k.seq);
  }
  for (const auto& [k, n] : maps.names) {
    if (n.empty()) continue;
    uint64_t& s = newest_by_name[n];
    s = std::max(s, k.seq);
  }
  std::set<DiskKey> out;
  for (const DiskKey& k : keys) {
    if (k.seq == 0) continue;
    bool gone = newest_by_dev[k.dev] > k.seq;
    if (auto it = maps.names.find(k); it != maps.names.end() &&
                                      !it->second.empty() &&
                                      newest_by_name[it->second] > k.seq) {
      gone = true;
    }
    if (gone) out.insert(k);
  }
  return out;
}

void RetiredDisks::Retire(const std::set<DiskKey>& gone,
                          const std::set<IoKey>& io,
                          const std::set<DiskKey>& paths, BlockMaps& maps) {
  auto name_of = [&](const DiskKey& k) {
    auto it = maps.names.find(k);
    return it != maps.names.end() ? it->second : NameOf(k);
  };
  for (const IoKey& k : io) {
    auto it = maps.io.find(k);
    if (it == maps.io.end()) continue;
    const std::string name = name_of(k.disk);
    const model::Op op = ToOp(k.op);
    DeviceIo& d = io_[{TallyName(name, k.disk.dev), model::Index(op)}];
    d.dev = model::DevId::FromKernel(k.disk.dev);
    d.diskseq = std::max(d.diskseq, k.disk.seq);
    d.disk = name;
    d.op = op;
    d.retired = true;
    model::OpStats add = ToOpStats(it->second);
    d.stats.Merge(add);
    maps.io.erase(it);
  }
  for (const DiskKey& k : paths) {
    auto it = maps.paths.find(k);
    if (it == maps.paths.end()) continue;
    const std::string name = name_of(k);
    PathEntry& p = paths_[TallyName(name, k.dev)];
    p.key = DiskKey{k.dev, std::max(p.key.seq, k.seq)};
    p.disk = name;
    p.retired = true;
    AddPathCounters(p.counters, it->second);
    maps.paths.erase(it);
  }
  // Names for the spill slots these disks may still hold.
  for (const auto& [k, v] : maps.spill) {
    if (!gone.contains(k.disk)) continue;
    if (auto n = maps.names.find(k.disk); n != maps.names.end()) {
      names_[k.disk] = n->second;
    }
  }
}

std::string RetiredDisks::NameOf(const DiskKey& key) const {
  auto it = names_.find(key);
  return it == names_.end() ? std::string() : it->second;
}

void RetiredDisks::Prune(const BlockMaps& maps) {
  for (auto it = names_.begin(); it != names_.end();) {
    bool used = false;
    for (const auto& [k, v] : maps.spill) used = used || k.disk == it->first;
    it = used ? std::next(it) : names_.erase(it);
  }
}

BlockSample AssembleSample(const BlockMaps& maps, const RetiredDisks& retired) {
  BlockSample out;
  out.dropped_start_map_full = maps.dropped_start_map_full;
  out.dropped_no_start_time = maps.dropped_no_start_time;
  out.dropped_start_collision = maps.dropped_start_collision;
  out.dropped_io_map_full = maps.dropped_io_map_full;
  out.dropped_path_map_full = maps.dropped_path_map_full;
  out.dropped_nvme_path_map_full = maps.dropped_nvme_path_map_full;
  out.dropped_hctx = maps.dropped_hctx;

  auto name_of = [&](const DiskKey& k) {
    auto it = maps.names.find(k);
    return it != maps.names.end() ? it->second : retired.NameOf(k);
  };
  // pw_io and the spill slots of the same key are one count.
  std::map<IoKey, IoTotals> live = maps.io;
  uint64_t saturated = 0;
  for (const auto& [k, v] : maps.spill) AddTotals(live[k], v, saturated);
  // Unknown ops fold into kOther: merge by (disk, model op).
  std::map<std::tuple<DiskKey, model::Op>, model::OpStats> by_op;
  for (const auto& [k, t] : live) {
    out.start_from_own += std::min(t.own_start, t.count);
    out.start_from_kernel += t.count - std::min(t.own_start, t.count);
    by_op[{k.disk, ToOp(k.op)}].Merge(ToOpStats(t));
  }
  for (auto& [k, stats] : by_op) {
    DeviceIo& d = out.io.emplace_back();
    d.dev = model::DevId::FromKernel(std::get<0>(k).dev);
    d.diskseq = std::get<0>(k).seq;
    d.disk = name_of(std::get<0>(k));
    d.op = std::get<1>(k);
    d.stats = std::move(stats);
  }
  for (const auto& [k, d] : retired.io()) out.io.push_back(d);
  std::stable_sort(out.io.begin(), out.io.end(),
                   [](const DeviceIo& a, const DeviceIo& b) {
                     return std::tie(a.dev, a.diskseq, a.op, a.retired) <
                            std::tie(b.dev, b.diskseq, b.op, b.retired);
                   });

  for (const auto& [k, c] : maps.paths) {
    PathEntry& p = out.paths.emplace_back();
    p.key = k;
    p.disk = name_of(k);
    p.counters = c;
  }
  for (const auto& [name, p] : retired.paths()) out.paths.push_back(p);
  std::stable_sort(out.paths.begin(), out.paths.end(),
                   [](const PathEntry& a, const PathEntry& b) {
                     return std::tie(a.key, a.retired) <
                            std::tie(b.key, b.retired);
                   });
  return out;
}

}  // namespace pathwise::bpf

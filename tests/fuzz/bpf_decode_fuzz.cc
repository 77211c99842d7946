// SPDX-License-Identifier: Apache-2.0
// Fuzzes the decoding of the block object's raw BPF map contents
// (bpf/map_decode.h): map entries of any size and content (disk names
// without a NUL or not ASCII, any dev_t and diskseq, op values outside
// enum pw_op, huge counters, keys and values of the wrong size, any CPU
// count) fed to BlockMapDecoder as block_object.cc feeds it, then the
// retirement of superseded disks and the assembly of the sample. Checks:
// an error has a message; decoded names are empty or printable ASCII;
// retired disks leave no pw_io entry; retiring moves counts, never loses or
// adds one (when the counters are small enough not to saturate).
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "bpf/map_decode.h"

extern "C" {
#include "bpf/pathwise_bpf.h"
}

namespace {

namespace bpf = pathwise::bpf;

// A size: usually the layout's, sometimes anything near it.
size_t Size(FuzzedDataProvider& in, size_t exact) {
  return in.ConsumeBool() ? exact
                          : in.ConsumeIntegralInRange<size_t>(0, exact + 16);
}

std::vector<uint8_t> Buf(FuzzedDataProvider& in, size_t n) {
  std::vector<uint8_t> b = in.ConsumeBytes<uint8_t>(n);
  b.resize(n, 0);  // short input: zero-filled, like an all-zero entry
  return b;
}

// Every completed count of a sample, by the name it is joined under.
std::map<std::string, uint64_t> Totals(const bpf::BlockSample& s) {
  std::map<std::string, uint64_t> t;
  for (const bpf::DeviceIo& d : s.io) {
    t[d.disk.empty() ? pathwise::model::ToString(d.dev) : d.disk] +=
        d.stats.completed;
  }
  return t;
}

void Check(const absl::Status& st) {
  if (!st.ok() && st.message().empty()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const int ncpus = in.ConsumeIntegralInRange<int>(-1, 4);
  const size_t cpus = ncpus > 0 ? static_cast<size_t>(ncpus) : 1;
  bpf::BlockMapDecoder dec(ncpus);
  const int records = in.ConsumeIntegralInRange<int>(0, 32);
  for (int i = 0; i < records && in.remaining_bytes() > 0; ++i) {
    switch (in.ConsumeIntegralInRange<int>(0, 5)) {
      case 0: {
        std::vector<uint8_t> k = Buf(in, Size(in, sizeof(pw_disk_key)));
        Check(dec.AddDiskName(k, Buf(in, Size(in, sizeof(pw_disk_name)))));
        break;
      }
      case 1: {
        std::vector<uint8_t> k = Buf(in, Size(in, sizeof(pw_io_key)));
        Check(dec.AddIo(
            k, Buf(in, Size(in, cpus * bpf::PerCpuStride(sizeof(pw_io_val))))));
        break;
      }
      case 2:
        Check(dec.AddSpillSlot(
            Buf(in, Size(in, cpus * bpf::PerCpuStride(sizeof(pw_io_spill))))));
        break;
      case 3: {
        std::vector<uint8_t> k = Buf(in, Size(in, sizeof(pw_disk_key)));
        Check(dec.AddPath(k, Buf(in, Size(in, sizeof(pw_path_val)))));
        break;
      }
      case 4:
        Check(dec.SetCounters(
            Buf(in, Size(in, cpus * bpf::PerCpuStride(sizeof(pw_counters))))));
        break;
      case 5: {
        const uint32_t index = in.ConsumeIntegral<uint32_t>();
        std::vector<uint8_t> o = Buf(in, Size(in, sizeof(pw_io_owner)));
        Check(dec.AddIoSlot(
            index, o,
            Buf(in, Size(in, cpus * bpf::PerCpuStride(sizeof(pw_io_val))))));
        break;
      }
    }
  }
  bpf::BlockMaps maps = std::move(dec).Take();
  for (const auto& [k, name] : maps.names) {
    for (char c : name) {
      if (c <= 0x20 || c >= 0x7f || c == '/') __builtin_trap();
    }
  }
  bool small = maps.saturated == 0;
  for (const auto* m : {&maps.io, &maps.spill}) {
    for (const auto& [k, t] : *m) small &= t.count < (uint64_t{1} << 56);
  }

  // What block_object.cc does on a read, with every delete succeeding.
  bpf::RetiredDisks retired;
  const std::map<std::string, uint64_t> before =
      Totals(bpf::AssembleSample(maps, retired));
  const std::set<bpf::DiskKey> gone = bpf::SupersededDisks(maps);
  std::set<bpf::IoKey> io;
  std::set<bpf::DiskKey> paths;
  for (const auto& [k, v] : maps.io) {
    if (gone.contains(k.disk)) io.insert(k);
  }
  for (const auto& [k, v] : maps.paths) {
    if (gone.contains(k)) paths.insert(k);
  }
  retired.Retire(gone, io, paths, maps);
  for (const bpf::DiskKey& k : gone) maps.names.erase(k);
  retired.Prune(maps);
  for (const auto& [k, v] : maps.io) {
    if (gone.contains(k.disk)) __builtin_trap();
  }
  const bpf::BlockSample after = bpf::AssembleSample(maps, retired);
  if (small) {
    // Per name: a gone disk's counts move to the tally (under its name, or
    // its dev_t when it had none, as before).
    if (Totals(after) != before) __builtin_trap();
  }
  for (size_t i = 1; i < after.io.size(); ++i) {
    const bpf::DeviceIo& a = after.io[i - 1];
    const bpf::DeviceIo& b = after.io[i];
    if (std::tie(b.dev, b.diskseq) < std::tie(a.dev, a.diskseq)) {
      __builtin_trap();
    }
  }
  return 0;
}

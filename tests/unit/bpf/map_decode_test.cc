// SPDX-License-Identifier: Apache-2.0
#include "bpf/map_decode.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "bpf/pathwise_bpf.h"
}

namespace pathwise::bpf {
namespace {

template <typename T>
std::vector<uint8_t> Bytes(const T& t) {
  std::vector<uint8_t> b(sizeof(T));
  std::memcpy(b.data(), &t, sizeof(T));
  return b;
}

// ncpus copies of `v`, each padded to the per-CPU stride.
template <typename T>
std::vector<uint8_t> PerCpu(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * PerCpuStride(sizeof(T)), 0);
  for (size_t i = 0; i < v.size(); ++i) {
    std::memcpy(b.data() + i * PerCpuStride(sizeof(T)), &v[i], sizeof(T));
  }
  return b;
}

std::vector<uint8_t> DiskKeyBytes(uint32_t dev, uint64_t seq) {
  pw_disk_key k = {};
  k.dev = dev;
  k.seq = seq;
  return Bytes(k);
}

std::vector<uint8_t> NameBytes(const std::string& name) {
  pw_disk_name n = {};
  std::memcpy(n.name, name.data(), std::min(name.size(), sizeof(n.name)));
  return Bytes(n);
}

pw_io_val Reads(uint64_t count, uint64_t own = 0) {
  pw_io_val v = {};
  v.count = count;
  v.bytes = count * 4096;
  v.lat_sum_ns = count * 1000;
  v.own_start = own;
  v.buckets[0] = count;
  return v;
}

std::vector<uint8_t> IoKeyBytes(uint32_t dev, uint64_t seq, uint32_t op) {
  pw_io_key k = {};
  k.dev = dev;
  k.op = op;
  k.seq = seq;
  return Bytes(k);
}

constexpr uint32_t kDev = 259u << 20 | 3;

TEST(BlockMapDecoder, NamesAndTheirFallbacks) {
  BlockMapDecoder dec(2);
  ASSERT_TRUE(
      dec.AddDiskName(DiskKeyBytes(kDev, 5), NameBytes("nvme0c0n1")).ok());
  // 32 bytes without a NUL, bytes that are not printable ASCII, a '/',
  // empty: all decode as unknown.
  ASSERT_TRUE(
      dec.AddDiskName(DiskKeyBytes(kDev, 6), NameBytes(std::string(32, 'a')))
          .ok());
  ASSERT_TRUE(
      dec.AddDiskName(DiskKeyBytes(kDev, 7), NameBytes("nv\xff\xfe")).ok());
  ASSERT_TRUE(dec.AddDiskName(DiskKeyBytes(kDev, 8), NameBytes("a/b")).ok());
  ASSERT_TRUE(dec.AddDiskName(DiskKeyBytes(kDev, 9), NameBytes("")).ok());
  const BlockMaps& m = dec.maps();
  EXPECT_EQ(m.names.at(DiskKey{kDev, 5}), "nvme0c0n1");
  for (uint64_t seq : {6, 7, 8, 9}) {
    EXPECT_EQ(m.names.at(DiskKey{kDev, seq}), "") << seq;
  }
  EXPECT_EQ(m.bad_names, 4u);
}

TEST(BlockMapDecoder, SizeMismatchesAreErrors) {
  BlockMapDecoder dec(2);
  std::vector<uint8_t> key = DiskKeyBytes(kDev, 1);
  std::vector<uint8_t> short_key(key.begin(), key.end() - 1);
  absl::Status st = dec.AddDiskName(short_key, NameBytes("x"));
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("pw_disk: key of 15 bytes"), std::string::npos)
      << st;
  // Padding of a disk key must be zero (keys are hashed as bytes).
  pw_disk_key padded = {};
  padded.pad = 1;
  EXPECT_FALSE(dec.AddPath(Bytes(padded), Bytes(pw_path_val{})).ok());
  // A per-CPU value for 1 CPU where 2 are possible.
  st =
      dec.AddIo(IoKeyBytes(kDev, 1, PW_OP_READ), PerCpu<pw_io_val>({Reads(1)}));
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("pw_io: per-CPU value"), std::string::npos) << st;
  EXPECT_FALSE(dec.SetCounters({}).ok());
  EXPECT_FALSE(BlockMapDecoder(0).AddSpillSlot({}).ok());
  EXPECT_TRUE(dec.maps().io.empty());
}

TEST(BlockMapDecoder, SumsOverCpusSaturateAndUnknownOpsAreOther) {
  BlockMapDecoder dec(2);
  ASSERT_TRUE(dec.AddIo(IoKeyBytes(kDev, 1, PW_OP_READ),
                        PerCpu<pw_io_val>({Reads(3), Reads(4, 9)}))
                  .ok());
  pw_io_val huge = Reads(UINT64_MAX - 1);
  ASSERT_TRUE(dec.AddIo(IoKeyBytes(kDev, 1, PW_OP_WRITE),
                        PerCpu<pw_io_val>({huge, Reads(5)}))
                  .ok());
  ASSERT_TRUE(dec.AddIo(IoKeyBytes(kDev, 1, 77),
                        PerCpu<pw_io_val>({Reads(1), Reads(0)}))
                  .ok());
  BlockMaps m = std::move(dec).Take();
  EXPECT_EQ(m.io.at(IoKey{{kDev, 1}, PW_OP_READ}).count, 7u);
  EXPECT_EQ(m.io.at(IoKey{{kDev, 1}, PW_OP_WRITE}).count, UINT64_MAX);
  EXPECT_GT(m.saturated, 0u);
  EXPECT_EQ(m.unknown_ops, 1u);
  BlockSample s = AssembleSample(m, RetiredDisks());
  ASSERT_EQ(s.io.size(), 3u);
  EXPECT_EQ(s.io[2].op, model::Op::kOther);
  EXPECT_EQ(s.io[2].stats.completed, 1u);
  // own_start above count (hostile) counts no kernel starts for it.
  EXPECT_EQ(s.start_from_own, 3u + 4u + 0u);
}

// Every drop counter is summed over CPUs into its own field, the own
// stamps' set collisions included, and reaches the sample.
TEST(BlockMapDecoder, DropCountersSumOverCpus) {
  BlockMapDecoder dec(2);
  pw_counters a = {}, b = {};
  for (int i = 0; i < PW_CNT_COUNT; ++i) {
    a.v[i] = 10 * (i + 1);
    b.v[i] = i + 1;
  }
  ASSERT_TRUE(dec.SetCounters(PerCpu<pw_counters>({a, b})).ok());
  const BlockMaps& m = dec.maps();
  EXPECT_EQ(m.dropped_start_map_full, 11u * (PW_CNT_DROP_START_FULL + 1));
  EXPECT_EQ(m.dropped_no_start_time, 11u * (PW_CNT_DROP_NO_START + 1));
  EXPECT_EQ(m.dropped_io_map_full, 11u * (PW_CNT_DROP_IO_FULL + 1));
  EXPECT_EQ(m.dropped_path_map_full, 11u * (PW_CNT_DROP_PATH_FULL + 1));
  EXPECT_EQ(m.dropped_nvme_path_map_full,
            11u * (PW_CNT_DROP_NVME_PATH_FULL + 1));
  EXPECT_EQ(m.dropped_hctx, 11u * (PW_CNT_DROP_HCTX + 1));
  EXPECT_EQ(m.dropped_start_collision, 11u * (PW_CNT_DROP_START_COLLISION + 1));
  const BlockSample s = AssembleSample(m, RetiredDisks());
  EXPECT_EQ(s.dropped_start_collision, m.dropped_start_collision);
  EXPECT_EQ(s.dropped_start_map_full, m.dropped_start_map_full);
}

TEST(BlockMapDecoder, SpillSlotsCountWhenUsed) {
  BlockMapDecoder dec(2);
  pw_io_spill used = {};
  used.key.dev = kDev;
  used.key.op = PW_OP_WRITE;
  used.key.seq = 4;
  used.used = 1;
  used.val = Reads(6);
  pw_io_spill unused = used;
  unused.used = 0;
  ASSERT_TRUE(dec.AddSpillSlot(PerCpu<pw_io_spill>({used, unused})).ok());
  ASSERT_TRUE(dec.AddIo(IoKeyBytes(kDev, 4, PW_OP_WRITE),
                        PerCpu<pw_io_val>({Reads(2), Reads(0)}))
                  .ok());
  BlockSample s = AssembleSample(dec.maps(), RetiredDisks());
  ASSERT_EQ(s.io.size(), 1u);
  EXPECT_EQ(s.io[0].stats.completed, 8u);  // pw_io + spill, one key
  EXPECT_EQ(s.io[0].stats.latency->Count(), 8u);
}

std::vector<uint8_t> OwnerBytes(uint32_t dev, uint32_t op, uint64_t seq) {
  pw_io_owner o = {};
  o.seq = seq;
  o.devop = PW_IO_DEVOP(dev, op);
  return Bytes(o);
}

// An owned I/O slot's counts are its key's, added to the key's pw_io
// counts; free and retiring slots count nothing and need no values.
TEST(BlockMapDecoder, IoSlotsCountForTheirOwner) {
  BlockMapDecoder dec(2);
  ASSERT_TRUE(dec.AddIoSlot(3, OwnerBytes(kDev, PW_OP_READ, 4),
                            PerCpu<pw_io_val>({Reads(5), Reads(1)}))
                  .ok());
  ASSERT_TRUE(dec.AddIo(IoKeyBytes(kDev, 4, PW_OP_READ),
                        PerCpu<pw_io_val>({Reads(2), Reads(0)}))
                  .ok());
  pw_io_owner free_owner = {};
  ASSERT_TRUE(dec.AddIoSlot(5, Bytes(free_owner), {}).ok());
  pw_io_owner retiring = {};
  retiring.devop = PW_IO_SLOT_RETIRING;
  ASSERT_TRUE(dec.AddIoSlot(7, Bytes(retiring), {}).ok());
  const BlockMaps& m = dec.maps();
  EXPECT_EQ(m.io_slot.size(), 1u);
  EXPECT_EQ(m.io_slot.at(IoKey{{kDev, 4}, PW_OP_READ}), 3u);
  EXPECT_EQ(m.io_slot_retiring, std::vector<uint32_t>{7});
  BlockSample s = AssembleSample(m, RetiredDisks());
  ASSERT_EQ(s.io.size(), 1u);
  EXPECT_EQ(s.io[0].stats.completed, 8u);  // slot + pw_io, one key
  EXPECT_EQ(s.io[0].stats.latency->Count(), 8u);
}

TEST(BlockMapDecoder, IoSlotBadBytesAreErrors) {
  BlockMapDecoder dec(2);
  // Owner of the wrong size, owned slot without its per-CPU values, a key
  // owning two slots (the programs claim one slot per key).
  EXPECT_FALSE(dec.AddIoSlot(0, std::vector<uint8_t>(15, 0), {}).ok());
  EXPECT_FALSE(dec.AddIoSlot(0, OwnerBytes(kDev, PW_OP_READ, 4), {}).ok());
  const std::vector<uint8_t> v = PerCpu<pw_io_val>({Reads(1), Reads(1)});
  EXPECT_TRUE(dec.AddIoSlot(1, OwnerBytes(kDev, PW_OP_READ, 4), v).ok());
  EXPECT_FALSE(dec.AddIoSlot(2, OwnerBytes(kDev, PW_OP_READ, 4), v).ok());
  // An unknown op decodes (as kOther), counted.
  EXPECT_TRUE(dec.AddIoSlot(3, OwnerBytes(kDev, 77, 4), v).ok());
  EXPECT_EQ(dec.maps().unknown_ops, 1u);
}

// A disk created on the dev_t another disk freed (a controller deleted and
// another created): its own entries, its own name, and the old disk's
// entries retired without a count going backwards.
TEST(BlockMapDecoder, ReusedDevTIsANewDisk) {
  RetiredDisks retired;
  auto read = [&](uint64_t old_reads, uint64_t new_reads, bool old_present) {
    BlockMapDecoder dec(1);
    if (old_present) {
      EXPECT_TRUE(
          dec.AddDiskName(DiskKeyBytes(kDev, 5), NameBytes("nvme0c0n1")).ok());
      EXPECT_TRUE(dec.AddIo(IoKeyBytes(kDev, 5, PW_OP_READ),
                            PerCpu<pw_io_val>({Reads(old_reads)}))
                      .ok());
      pw_path_val pv = {};
      pv.failovers = 2;
      EXPECT_TRUE(dec.AddPath(DiskKeyBytes(kDev, 5), Bytes(pv)).ok());
    }
    EXPECT_TRUE(
        dec.AddDiskName(DiskKeyBytes(kDev, 9), NameBytes("nvme0c2n1")).ok());
    EXPECT_TRUE(dec.AddIo(IoKeyBytes(kDev, 9, PW_OP_READ),
                          PerCpu<pw_io_val>({Reads(new_reads)}))
                    .ok());
    return std::move(dec).Take();
  };
  BlockMaps m = read(10, 3, true);
  const std::set<DiskKey> gone = SupersededDisks(m);
  EXPECT_EQ(gone, (std::set<DiskKey>{{kDev, 5}}));
  BlockSample before = AssembleSample(m, retired);
  ASSERT_EQ(before.io.size(), 2u);
  EXPECT_EQ(before.io[0].disk, "nvme0c0n1");
  EXPECT_EQ(before.io[0].stats.completed, 10u);
  EXPECT_EQ(before.io[1].disk, "nvme0c2n1");
  EXPECT_EQ(before.io[1].stats.completed, 3u);

  // The reader deletes the gone disk's entries and retires them.
  retired.Retire(gone, {IoKey{{kDev, 5}, PW_OP_READ}}, {DiskKey{kDev, 5}}, m);
  EXPECT_TRUE(m.io.count(IoKey{{kDev, 9}, PW_OP_READ}));
  EXPECT_FALSE(m.io.count(IoKey{{kDev, 5}, PW_OP_READ}));
  // The next read: only the new disk is left in the maps.
  BlockMaps next = read(0, 7, false);
  EXPECT_TRUE(SupersededDisks(next).empty());
  BlockSample after = AssembleSample(next, retired);
  ASSERT_EQ(after.io.size(), 2u);  // sorted by (dev, diskseq)
  EXPECT_EQ(after.io[0].disk, "nvme0c0n1");
  EXPECT_EQ(after.io[0].diskseq, 5u);
  EXPECT_EQ(after.io[0].stats.completed, 10u);
  EXPECT_TRUE(after.io[0].retired);
  EXPECT_EQ(after.io[1].disk, "nvme0c2n1");
  EXPECT_EQ(after.io[1].stats.completed, 7u);
  EXPECT_FALSE(after.io[1].retired);
  ASSERT_EQ(after.paths.size(), 1u);
  EXPECT_EQ(after.paths[0].disk, "nvme0c0n1");
  EXPECT_EQ(after.paths[0].counters.failovers, 2u);
  EXPECT_TRUE(after.paths[0].retired);
}

// The same name on a new instance (a loop device attached again, a path
// re-created): the old instance is gone, and the name's total is kept.
TEST(BlockMapDecoder, SameNameNewerSeqSupersedes) {
  BlockMapDecoder dec(1);
  ASSERT_TRUE(dec.AddDiskName(DiskKeyBytes(kDev, 5), NameBytes("loop0")).ok());
  ASSERT_TRUE(
      dec.AddDiskName(DiskKeyBytes(kDev + 1, 8), NameBytes("loop0")).ok());
  ASSERT_TRUE(dec.AddDiskName(DiskKeyBytes(kDev + 2, 0), NameBytes("x")).ok());
  ASSERT_TRUE(dec.AddDiskName(DiskKeyBytes(kDev + 2, 0), NameBytes("x")).ok());
  EXPECT_EQ(SupersededDisks(dec.maps()), (std::set<DiskKey>{{kDev, 5}}));
}

// A gone disk's spill slots stay (they are never released): they keep the
// disk's name after its pw_disk entry is deleted, and are not counted twice.
TEST(BlockMapDecoder, GoneDiskSpillKeepsItsName) {
  RetiredDisks retired;
  pw_io_spill sl = {};
  sl.key.dev = kDev;
  sl.key.op = PW_OP_READ;
  sl.key.seq = 5;
  sl.used = 1;
  sl.val = Reads(4);
  auto read = [&](bool with_old_name) {
    BlockMapDecoder dec(1);
    if (with_old_name) {
      EXPECT_TRUE(
          dec.AddDiskName(DiskKeyBytes(kDev, 5), NameBytes("loop0")).ok());
      EXPECT_TRUE(dec.AddIo(IoKeyBytes(kDev, 5, PW_OP_READ),
                            PerCpu<pw_io_val>({Reads(1)}))
                      .ok());
    }
    EXPECT_TRUE(
        dec.AddDiskName(DiskKeyBytes(kDev, 6), NameBytes("loop0")).ok());
    EXPECT_TRUE(dec.AddSpillSlot(PerCpu<pw_io_spill>({sl})).ok());
    return std::move(dec).Take();
  };
  BlockMaps m = read(true);
  std::set<DiskKey> gone = SupersededDisks(m);
  ASSERT_EQ(gone.size(), 1u);
  retired.Retire(gone, {IoKey{{kDev, 5}, PW_OP_READ}}, {}, m);
  for (int i = 0; i < 2; ++i) {
    BlockMaps next = read(false);
    gone = SupersededDisks(next);
    retired.Retire(gone, {}, {}, next);
    retired.Prune(next);
    BlockSample s = AssembleSample(next, retired);
    uint64_t total = 0;
    for (const DeviceIo& d : s.io) {
      EXPECT_EQ(d.disk, "loop0");
      total += d.stats.completed;
    }
    EXPECT_EQ(total, 5u) << i;  // 1 retired from pw_io + 4 in the slot
  }
}

}  // namespace
}  // namespace pathwise::bpf

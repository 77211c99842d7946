// Host tests of the BPF sampler against the running kernel (label `bpf`):
// loop devices on a file, fio issuing an exact number of direct 4 KiB I/Os,
// and exact agreement with /sys/block/loopN/stat. They need root, losetup
// and fio, and FAIL when any of those is missing.
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "bpf/kernel_btf.h"
#include "bpf/sampler.h"
#include "model/delta.h"
#include "pathwise_block.skel.h"
#include "pathwise_nvme.skel.h"
#include "tests/bpf/completion_trace.h"
#include "tests/bpf/loop_device.h"

extern "C" {
#include "bpf/pathwise_bpf.h"
}

namespace pathwise::bpf {
namespace {

const model::OpStats* Find(const SamplerSnapshot& s, model::DevId dev, Op op) {
  for (const DeviceIo& d : s.io) {
    if (d.dev == dev && d.op == op) return &d.stats;
  }
  return nullptr;
}

// What the sampler counted for (dev, op) between two reads.
model::OpStats Delta(const SamplerSnapshot& before,
                     const SamplerSnapshot& after, model::DevId dev, Op op) {
  const model::OpStats* a = Find(after, dev, op);
  if (!a) return {};
  const model::OpStats* b = Find(before, dev, op);
  return model::Delta(*a, b ? *b : model::OpStats{});
}

class BpfHostTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(geteuid(), 0u) << "the bpf tests need root (they load BPF "
                                "programs and create loop devices)";
    ASSERT_TRUE(HaveCommand("losetup")) << "losetup (util-linux) is missing";
    ASSERT_TRUE(HaveCommand("fio")) << "fio is missing";
    ASSERT_EQ(access("/sys/kernel/btf/vmlinux", R_OK), 0)
        << "kernel BTF /sys/kernel/btf/vmlinux is missing";
  }

  // N reads then N writes on a fresh loop device, checked exactly against
  // both fio's count and the device's sysfs stat.
  void ExactCountsCase(const SamplerOptions& options, bool expect_own_start,
                       const std::string& engine, int iodepth) {
    std::string err;
    std::unique_ptr<LoopDevice> loop = LoopDevice::Create(&err);
    ASSERT_NE(loop, nullptr) << err;
    // Run counts tell a completion the program never saw (no run) from
    // one it saw and could not count (a run and a drop).
    SamplerOptions with_stats = options;
    with_stats.enable_bpf_stats = true;
    // Only this test's device goes to the spill slots: other disks' keys
    // would take this CPU's few slots on a busy host.
    if (options.force_spill) {
      with_stats.force_spill_dev = loop->dev().major << 20 | loop->dev().minor;
    }
    absl::StatusOr<std::unique_ptr<BpfSampler>> sampler =
        BpfSampler::Create(with_stats);
    ASSERT_TRUE(sampler.ok()) << sampler.status();
    loop->Settle();

    constexpr uint64_t kN = 3000;
    // The block layer's completions of this device as tracefs saw them,
    // with the task each ran on (see CompletionTrace).
    absl::StatusOr<std::unique_ptr<CompletionTrace>> witness =
        CompletionTrace::Start(loop->dev().major << 20 | loop->dev().minor);
    ASSERT_TRUE(witness.ok()) << witness.status();
    absl::StatusOr<SamplerSnapshot> before = (*sampler)->Read();
    ASSERT_TRUE(before.ok()) << before.status();
    std::optional<BlockStat> sys_before = ReadBlockStat(loop->name());
    ASSERT_TRUE(sys_before.has_value());

    CmdResult r = Fio(loop->path(), "randread", kN, engine, iodepth);
    ASSERT_EQ(r.status, 0) << r.output;
    r = Fio(loop->path(), "randwrite", kN, engine, iodepth);
    ASSERT_EQ(r.status, 0) << r.output;

    absl::StatusOr<SamplerSnapshot> after = (*sampler)->Read();
    ASSERT_TRUE(after.ok()) << after.status();
    std::optional<BlockStat> sys_after = ReadBlockStat(loop->name());
    ASSERT_TRUE(sys_after.has_value());
    absl::StatusOr<CompletionCounts> traced = (*witness)->Stop();
    ASSERT_TRUE(traced.ok()) << traced.status();
    ASSERT_FALSE(traced->overrun) << "the tracefs witness lost events";
    EXPECT_EQ(traced->unknown_tgid, 0u);
    // Completions handled while a thread of PID 1 was current, which a
    // kernel with init isolation (BlockLayout::init_context_hidden) never
    // shows to pathwise's programs; on other kernels they are counted.
    const uint64_t hidden =
        (*sampler)->init_context_hidden() ? traced->in_init : 0;
    EXPECT_EQ(after->init_context_hidden, (*sampler)->init_context_hidden());

    const model::OpStats reads = Delta(*before, *after, loop->dev(), Op::kRead);
    const model::OpStats writes =
        Delta(*before, *after, loop->dev(), Op::kWrite);
    ASSERT_TRUE(reads.latency && writes.latency && reads.errors &&
                writes.errors);
    // Exact per op only when the kernel hid nothing; the sum below is
    // exact either way.
    if (hidden == 0) {
      EXPECT_EQ(reads.completed, kN);
      EXPECT_EQ(writes.completed, kN);
      EXPECT_EQ(reads.bytes, kN * 4096);
      EXPECT_EQ(writes.bytes, kN * 4096);
    }
    EXPECT_EQ(reads.bytes, reads.completed * 4096);
    EXPECT_EQ(writes.bytes, writes.completed * 4096);
    EXPECT_EQ(reads.latency->Count(), reads.completed);
    EXPECT_EQ(writes.latency->Count(), writes.completed);
    EXPECT_EQ(*reads.errors, 0u);
    EXPECT_EQ(*writes.errors, 0u);
    // The kernel side recorded the disk's name (the join key for hidden
    // NVMe path disks, which have no dev_t in sysfs).
    for (const DeviceIo& d : after->io) {
      if (d.dev == loop->dev()) EXPECT_EQ(d.disk, loop->name());
    }
    EXPECT_GT(reads.time_ns, 0u);
    // Mean latency lies within the histogram's bounds.
    const double mean_s = double(reads.time_ns) / 1e9 / double(kN);
    EXPECT_GT(mean_s, 0);
    EXPECT_LT(mean_s, 1.0);

    // Agreement with the block layer's own accounting of this device.
    EXPECT_EQ(sys_after->reads - sys_before->reads, kN);
    EXPECT_EQ(sys_after->writes - sys_before->writes, kN);
    EXPECT_EQ(traced->total, 2 * kN) << "the tracefs witness disagrees";
    if (hidden == 0) {
      EXPECT_EQ((sys_after->read_sectors - sys_before->read_sectors) * 512,
                reads.bytes);
      EXPECT_EQ((sys_after->write_sectors - sys_before->write_sectors) * 512,
                writes.bytes);
    }

    // Where the start time came from, and nothing dropped for this device.
    if (expect_own_start) {
      EXPECT_GE(after->start_from_own - before->start_from_own, 2 * kN);
    } else {
      EXPECT_GE(after->start_from_kernel - before->start_from_kernel, 2 * kN);
    }
    // Every drop reason, as deltas over the test (drops are global: another
    // device's completions may add to them, e.g. no_start_time for the
    // host disk's flush sequences). What the block layer saw and pathwise
    // did not count must be covered by drops; a loss no reason explains
    // is a silent loss and fails here with everything needed to tell why.
    std::string drops;
    uint64_t dropped = 0;
    for (DropReason r : model::kAllDropReasons) {
      const uint64_t d =
          after->dropped[model::Index(r)] - before->dropped[model::Index(r)];
      dropped += d;
      absl::StrAppend(&drops, " reason", model::Index(r), "=", d);
    }
    for (const ProgramStats& p : after->programs) {
      uint64_t runs_before = 0;
      for (const ProgramStats& q : before->programs) {
        if (q.id == p.id) runs_before = q.run_count;
      }
      absl::StrAppend(&drops, " ", p.name, ".runs=", p.run_count - runs_before,
                      " recursion_misses=", p.recursion_misses);
    }
    const uint64_t seen = (sys_after->reads - sys_before->reads) +
                          (sys_after->writes - sys_before->writes);
    const uint64_t counted = reads.completed + writes.completed;
    absl::StrAppend(&drops, " init_context_completions=", traced->in_init,
                    " init_context_hidden=", (*sampler)->init_context_hidden());
    EXPECT_LE(counted, seen) << drops;
    EXPECT_LE(seen - std::min(seen, counted), dropped + hidden)
        << "I/Os lost with no drop reason:" << drops;
    // Nothing interferes with a loop device here, so every completion the
    // programs ran for was counted: exactly what the kernel hid is missing.
    EXPECT_EQ(counted + hidden, seen) << drops;
    if (hidden > 0) {
      std::printf(
          "kernel hid %llu of %llu completions (ran on PID 1's "
          "threads)\n",
          static_cast<unsigned long long>(hidden),
          static_cast<unsigned long long>(seen));
    }
    // Nothing that interferes with a loop device here: no map can fill
    // and nothing nests, so these must stay zero.
    for (DropReason r : {DropReason::kStartMapFull, DropReason::kIoMapFull,
                         DropReason::kPathMapFull, DropReason::kRecursion}) {
      EXPECT_EQ(after->dropped[model::Index(r)], 0u)
          << model::Index(r) << drops;
    }
    // No failovers on a loop device.
    for (const PathSample& p : after->paths) {
      if (p.dev == loop->dev()) EXPECT_EQ(p.stats.failovers, 0u);
    }
    if (options.hctx_slots > 0) ExpectHctxSumsToDisk(*after, *loop);
  }

  // Per hardware queue: the device's queues add up exactly to what was
  // counted for the device (every op, since attach: the device is newer
  // than the sampler), and nothing was dropped (the slots are plenty).
  void ExpectHctxSumsToDisk(const SamplerSnapshot& s, const LoopDevice& loop) {
    ASSERT_TRUE(s.hctx_on);
    uint64_t disk_count = 0, disk_ns = 0;
    for (const DeviceIo& d : s.io) {
      if (d.dev != loop.dev()) continue;
      disk_count += d.stats.completed;
      disk_ns += d.stats.time_ns;
    }
    uint64_t q_count = 0, q_ns = 0, q_remote = 0, q_buckets = 0;
    int queues = 0;
    for (const DiskHctxIo& h : s.hctx) {
      if (model::DevId::FromKernel(h.key.dev) != loop.dev()) continue;
      ++queues;
      EXPECT_EQ(h.disk, loop.name());
      q_count += h.totals.count;
      q_ns += h.totals.lat_sum_ns;
      q_remote += h.totals.remote;
      for (uint64_t b : h.totals.buckets) q_buckets += b;
    }
    EXPECT_GE(queues, 1) << "no hardware queue entry for " << loop.name();
    EXPECT_GT(disk_count, 0u);
    EXPECT_EQ(q_count, disk_count) << "per-queue completions vs the disk's";
    EXPECT_EQ(q_ns, disk_ns) << "per-queue latency sum vs the disk's";
    EXPECT_EQ(q_buckets, q_count);
    EXPECT_LE(q_remote, q_count);
    EXPECT_EQ(s.dropped_hctx, 0u);
  }
};

TEST_F(BpfHostTest, AttachesWithTpBtfOnThisKernel) {
  absl::StatusOr<std::unique_ptr<BpfSampler>> s = BpfSampler::Create();
  ASSERT_TRUE(s.ok()) << s.status();
  // The host kernel (6.x with BTF) supports tp_btf: the fallback must not
  // have been needed.
  EXPECT_EQ((*s)->block_attach_mode(), "tp_btf");
  EXPECT_EQ((*s)->ProgramIds().size(), 2u);
  EXPECT_EQ((*s)->LinkIds().size(), 2u);
  absl::StatusOr<SamplerSnapshot> snap = (*s)->Read();
  ASSERT_TRUE(snap.ok()) << snap.status();
  // nvme-core: either attached, or reported as not loaded / unavailable,
  // never a failure of the whole sampler.
  EXPECT_FALSE(snap->nvme_status_message.empty());
  EXPECT_NE(snap->nvme_state, NvmeAttachState::kDisabled);
}

TEST_F(BpfHostTest, KernelStartTimeExactCounts) {
  // Loop queues have writeback throttling, hence QUEUE_FLAG_STATS: the
  // kernel stamps rq->io_start_time_ns and pathwise stores nothing per I/O.
  const std::string wbt = Slurp("/sys/block/loop0/queue/wbt_lat_usec");
  SamplerOptions o;
  ExactCountsCase(o, /*expect_own_start=*/false, "psync", 1);
}

TEST_F(BpfHostTest, OwnStartTimeExactCounts) {
  SamplerOptions o;
  o.force_own_start = true;
  ExactCountsCase(o, /*expect_own_start=*/true, "psync", 1);
}

TEST_F(BpfHostTest, ExactCountsAtQueueDepth) {
  SamplerOptions o;
  ExactCountsCase(o, /*expect_own_start=*/false, "libaio", 16);
}

TEST_F(BpfHostTest, OwnStartExactCountsAtQueueDepth) {
  SamplerOptions o;
  o.force_own_start = true;
  ExactCountsCase(o, /*expect_own_start=*/true, "libaio", 16);
}

// Completions whose (device, op) entry could not be created go to the
// per-CPU spill slots (a transient allocation failure in the completion's
// atomic context lost one write on 6.1 before); forced here, the counts
// must still be exact.
TEST_F(BpfHostTest, SpillSlotsExactCounts) {
  SamplerOptions o;
  o.force_spill = true;
  ExactCountsCase(o, /*expect_own_start=*/false, "libaio", 16);
}

// --queues: the same exact counts, and per hardware queue counts that sum
// to the device's, from the I/O entries and from the spill slots.
TEST_F(BpfHostTest, PerHardwareQueueExactCounts) {
  SamplerOptions o;
  o.hctx_slots = bpf::HctxSlotsFor(0);
  ExactCountsCase(o, /*expect_own_start=*/false, "libaio", 16);
}

TEST_F(BpfHostTest, PerHardwareQueueSpillOwnStartExactCounts) {
  SamplerOptions o;
  o.hctx_slots = bpf::HctxSlotsFor(0);
  o.force_spill = true;
  o.force_own_start = true;
  ExactCountsCase(o, /*expect_own_start=*/true, "psync", 1);
}

TEST_F(BpfHostTest, SpillSlotsOwnStartExactCounts) {
  SamplerOptions o;
  o.force_spill = true;
  o.force_own_start = true;
  ExactCountsCase(o, /*expect_own_start=*/true, "psync", 1);
}

// Reads of `name` in a snapshot, live and retired entries summed (what the
// collector joins under the name), and those of the live entry `seq`.
uint64_t ReadsOf(const SamplerSnapshot& s, const std::string& name) {
  uint64_t n = 0;
  for (const DeviceIo& d : s.io) {
    if (d.disk == name && d.op == Op::kRead) n += d.stats.completed;
  }
  return n;
}
uint64_t LiveReadsOf(const SamplerSnapshot& s, model::DevId dev, uint64_t seq) {
  uint64_t n = 0;
  for (const DeviceIo& d : s.io) {
    if (d.dev == dev && d.diskseq == seq && !d.retired && d.op == Op::kRead)
      n += d.stats.completed;
  }
  return n;
}

// The (dev_t, diskseq) keys of the sampler's pw_io map.
std::vector<std::pair<uint32_t, uint64_t>> IoMapKeys(const BpfSampler& s) {
  std::vector<std::pair<uint32_t, uint64_t>> out;
  for (uint32_t id : s.MapIds()) {
    const int fd = bpf_map_get_fd_by_id(id);
    if (fd < 0) continue;
    bpf_map_info info = {};
    uint32_t len = sizeof(info);
    if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0 &&
        std::string(info.name) == "pw_io") {
      pw_io_key key = {}, next = {};
      const pw_io_key* prev = nullptr;
      while (bpf_map_get_next_key(fd, prev, &next) == 0) {
        out.emplace_back(next.dev, next.seq);
        key = next;
        prev = &key;
      }
    }
    close(fd);
  }
  return out;
}

// A loop device detached and attached again keeps its name and dev_t but
// is a new disk (a new diskseq), as a path disk that reuses the dev_t of
// one that left: its I/O is counted under its own key from zero, the old
// disk's entries leave the kernel maps, and the name's total never goes
// backwards.
TEST_F(BpfHostTest, ReattachedLoopDeviceIsANewDisk) {
  std::string err;
  std::unique_ptr<LoopDevice> loop = LoopDevice::Create(&err);
  ASSERT_NE(loop, nullptr) << err;
  const uint64_t seq1 = loop->DiskSeq();
  ASSERT_GT(seq1, 0u) << "no /sys/block/" << loop->name() << "/diskseq";
  absl::StatusOr<std::unique_ptr<BpfSampler>> sampler = BpfSampler::Create();
  ASSERT_TRUE(sampler.ok()) << sampler.status();
  const uint32_t kdev = loop->dev().major << 20 | loop->dev().minor;

  constexpr uint64_t kN1 = 400, kN2 = 300;
  ASSERT_EQ(Fio(loop->path(), "randread", kN1).status, 0);
  absl::StatusOr<SamplerSnapshot> s1 = (*sampler)->Read();
  ASSERT_TRUE(s1.ok()) << s1.status();
  EXPECT_EQ(LiveReadsOf(*s1, loop->dev(), seq1), kN1);
  EXPECT_EQ(ReadsOf(*s1, loop->name()), kN1);

  ASSERT_TRUE(loop->Reattach(&err)) << err;
  const uint64_t seq2 = loop->DiskSeq();
  ASSERT_GT(seq2, seq1);
  // Whatever probing did on the new disk is in `mid`.
  absl::StatusOr<SamplerSnapshot> mid = (*sampler)->Read();
  ASSERT_TRUE(mid.ok()) << mid.status();
  std::optional<BlockStat> sys_mid = ReadBlockStat(loop->name());
  ASSERT_TRUE(sys_mid.has_value());
  ASSERT_EQ(Fio(loop->path(), "randread", kN2).status, 0);
  absl::StatusOr<SamplerSnapshot> s2 = (*sampler)->Read();
  ASSERT_TRUE(s2.ok()) << s2.status();
  std::optional<BlockStat> sys2 = ReadBlockStat(loop->name());
  ASSERT_TRUE(sys2.has_value());

  // The new disk's reads, exactly, under its own key and the same name.
  EXPECT_EQ(LiveReadsOf(*s2, loop->dev(), seq2) -
                LiveReadsOf(*mid, loop->dev(), seq2),
            kN2);
  EXPECT_EQ(sys2->reads - sys_mid->reads, kN2);
  EXPECT_EQ(LiveReadsOf(*s2, loop->dev(), seq1), 0u);
  for (const DeviceIo& d : s2->io) {
    if (d.dev == loop->dev()) EXPECT_EQ(d.disk, loop->name());
  }
  // The old disk's counts are kept (retired), the name's total is
  // monotonic and adds up.
  uint64_t retired = 0;
  for (const DeviceIo& d : s2->io) {
    if (d.retired && d.disk == loop->name() && d.op == Op::kRead) {
      retired += d.stats.completed;
    }
  }
  EXPECT_EQ(retired, kN1);
  EXPECT_GE(ReadsOf(*mid, loop->name()), ReadsOf(*s1, loop->name()));
  EXPECT_EQ(ReadsOf(*s2, loop->name()) - ReadsOf(*mid, loop->name()), kN2);
  // The old disk's entries have left the kernel map.
  for (const auto& [dev, seq] : IoMapKeys(**sampler)) {
    EXPECT_FALSE(dev == kdev && seq == seq1)
        << "pw_io still holds the detached disk's entry";
  }
  bool new_key = false;
  for (const auto& [dev, seq] : IoMapKeys(**sampler)) {
    new_key |= dev == kdev && seq == seq2;
  }
  EXPECT_TRUE(new_key);
}

TEST_F(BpfHostTest, BpfStatsCountRuns) {
  SamplerOptions o;
  o.enable_bpf_stats = true;
  absl::StatusOr<std::unique_ptr<BpfSampler>> s = BpfSampler::Create(o);
  ASSERT_TRUE(s.ok()) << s.status();
  std::string err;
  std::unique_ptr<LoopDevice> loop = LoopDevice::Create(&err);
  ASSERT_NE(loop, nullptr) << err;
  ASSERT_EQ(Fio(loop->path(), "randread", 500).status, 0);
  absl::StatusOr<SamplerSnapshot> snap = (*s)->Read();
  ASSERT_TRUE(snap.ok()) << snap.status();
  EXPECT_TRUE(snap->bpf_stats_enabled);
  uint64_t runs = 0, ns = 0;
  for (const ProgramStats& p : snap->programs) {
    runs += p.run_count;
    ns += p.run_time_ns;
    EXPECT_EQ(p.name.rfind("pw_", 0), 0u) << p.name;
  }
  EXPECT_GE(runs, 1000u);  // issue + complete per read
  EXPECT_GT(ns, 0u);
}

// Polls until none of `ids` exists any more (kernel frees are deferred).
template <typename GetFd>
std::vector<uint32_t> StillAlive(const std::vector<uint32_t>& ids,
                                 GetFd get_fd) {
  std::vector<uint32_t> alive;
  for (int attempt = 0; attempt < 100; ++attempt) {
    alive.clear();
    for (uint32_t id : ids) {
      const int fd = get_fd(id);
      if (fd >= 0) {
        close(fd);
        alive.push_back(id);
      }
    }
    if (alive.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return alive;
}

TEST_F(BpfHostTest, DestructionLeavesNothingBehind) {
  std::vector<uint32_t> progs, maps, links;
  {
    absl::StatusOr<std::unique_ptr<BpfSampler>> s = BpfSampler::Create();
    ASSERT_TRUE(s.ok()) << s.status();
    progs = (*s)->ProgramIds();
    maps = (*s)->MapIds();
    links = (*s)->LinkIds();
    ASSERT_FALSE(progs.empty());
    ASSERT_FALSE(maps.empty());
    ASSERT_FALSE(links.empty());
    // They are visible while the sampler lives.
    const CmdResult live = RunCmd("bpftool -j prog show");
    ASSERT_EQ(live.status, 0) << live.output;
    for (uint32_t id : progs) {
      EXPECT_NE(live.output.find(absl::StrCat("\"id\":", id, ",")),
                std::string::npos)
          << "prog " << id << " not listed by bpftool while attached";
    }
  }
  EXPECT_TRUE(StillAlive(progs, bpf_prog_get_fd_by_id).empty());
  EXPECT_TRUE(StillAlive(maps, bpf_map_get_fd_by_id).empty());
  EXPECT_TRUE(StillAlive(links, bpf_link_get_fd_by_id).empty());
  for (const char* what : {"prog", "map", "link"}) {
    const CmdResult r = RunCmd(absl::StrCat("bpftool -j ", what, " show"));
    ASSERT_EQ(r.status, 0) << r.output;
    const std::vector<uint32_t>& ids = std::string(what) == "prog"  ? progs
                                       : std::string(what) == "map" ? maps
                                                                    : links;
    for (uint32_t id : ids) {
      EXPECT_EQ(r.output.find(absl::StrCat("\"id\":", id, ",")),
                std::string::npos)
          << what << " " << id << " still listed by bpftool";
    }
    if (std::string(what) == "link") {
      for (uint32_t id : progs) {
        EXPECT_EQ(r.output.find(absl::StrCat("\"prog_id\":", id, ",")),
                  std::string::npos)
            << "a link to prog " << id << " is still listed";
      }
    }
  }
  // Nothing pinned either.
  const CmdResult pins = RunCmd(
      "grep -rl pathwise /sys/fs/bpf 2>/dev/null; ls -R /sys/fs/bpf "
      "2>/dev/null | grep -c pw_ || true");
  EXPECT_EQ(std::string(absl::StripAsciiWhitespace(pins.output)), "0")
      << pins.output;
}

// pw_path (failovers, NVMe status) must never allocate in the completion's
// atomic context: a preallocated map, not BPF_F_NO_PREALLOC.
TEST_F(BpfHostTest, PathMapIsPreallocated) {
  absl::StatusOr<std::unique_ptr<BpfSampler>> s = BpfSampler::Create();
  ASSERT_TRUE(s.ok()) << s.status();
  bool found = false;
  for (uint32_t id : (*s)->MapIds()) {
    const int fd = bpf_map_get_fd_by_id(id);
    ASSERT_GE(fd, 0) << id;
    bpf_map_info info = {};
    uint32_t len = sizeof(info);
    ASSERT_EQ(bpf_obj_get_info_by_fd(fd, &info, &len), 0);
    close(fd);
    if (std::string(info.name) != "pw_path") continue;
    found = true;
    EXPECT_EQ(info.type, BPF_MAP_TYPE_HASH);
    EXPECT_EQ(info.map_flags & BPF_F_NO_PREALLOC, 0u);
  }
  EXPECT_TRUE(found) << "no map named pw_path";
}

// The nvme_complete_rq program cannot attach on a host without nvme-core,
// but its raw_tp flavour must pass the verifier of this kernel. Load it
// with the layout of 6.1/6.12's struct nvme_request (retries at 17,
// status at 20) and check that loading succeeds.
TEST_F(BpfHostTest, NvmeProgramPassesTheVerifier) {
  struct btf* vmlinux = btf__load_vmlinux_btf();
  ASSERT_NE(vmlinux, nullptr);
  const int rq_id = btf__find_by_name_kind(vmlinux, "request", BTF_KIND_STRUCT);
  ASSERT_GT(rq_id, 0);
  const uint32_t rq_size = btf__type_by_id(vmlinux, rq_id)->size;
  btf__free(vmlinux);

  std::string log(1 << 20, '\0');
  LIBBPF_OPTS(bpf_object_open_opts, opts);
  opts.kernel_log_buf = log.data();
  opts.kernel_log_size = log.size();
  pathwise_nvme* skel = pathwise_nvme__open_opts(&opts);
  ASSERT_NE(skel, nullptr);
  skel->rodata->request_size = rq_size;
  skel->rodata->nvme_retries_off = 17;
  skel->rodata->nvme_status_shift = 24;
  bpf_program__set_autoload(skel->progs.pw_nvme_btf, false);
  bpf_program__set_autoload(skel->progs.pw_nvme_raw, true);
  const int err = pathwise_nvme__load(skel);
  EXPECT_EQ(err, 0) << "verifier log:\n" << log.c_str();
  pathwise_nvme__destroy(skel);
}

// The raw_tp flavour of the block programs (the fallback where tp_btf
// cannot attach) must pass this kernel's verifier too, diskseq read
// included; the sampler itself loads tp_btf here.
TEST_F(BpfHostTest, BlockRawTpProgramsPassTheVerifier) {
  std::string log(1 << 20, '\0');
  LIBBPF_OPTS(bpf_object_open_opts, opts);
  opts.kernel_log_buf = log.data();
  opts.kernel_log_size = log.size();
  pathwise_block* skel = pathwise_block__open_opts(&opts);
  ASSERT_NE(skel, nullptr);
  bpf_program__set_autoload(skel->progs.pw_issue_btf, false);
  bpf_program__set_autoload(skel->progs.pw_done_btf, false);
  const int err = pathwise_block__load(skel);
  EXPECT_EQ(err, 0) << "verifier log:\n" << log.c_str();
  pathwise_block__destroy(skel);

  // With the per hardware queue code (the verifier removes it when off).
  skel = pathwise_block__open_opts(&opts);
  ASSERT_NE(skel, nullptr);
  skel->rodata->queues = true;
  skel->rodata->hctx_slots = 256;
  bpf_map__set_max_entries(skel->maps.pw_hctx, 256);
  bpf_program__set_autoload(skel->progs.pw_issue_btf, false);
  bpf_program__set_autoload(skel->progs.pw_done_btf, false);
  EXPECT_EQ(pathwise_block__load(skel), 0) << "verifier log:\n" << log.c_str();
  pathwise_block__destroy(skel);
}

TEST_F(BpfHostTest, KernelLayoutFromRunningKernelBtf) {
  struct btf* vmlinux = btf__load_vmlinux_btf();
  ASSERT_NE(vmlinux, nullptr);
  absl::StatusOr<BlockLayout> l = ReadBlockLayout(vmlinux);
  btf__free(vmlinux);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->op_class[0], Op::kRead);
  EXPECT_EQ(l->op_class[1], Op::kWrite);
  EXPECT_NE(l->req_nvme_mpath_mask, 0u);
  EXPECT_NE(l->rqf_stats_mask, 0u);
}

}  // namespace
}  // namespace pathwise::bpf

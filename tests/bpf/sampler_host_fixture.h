// SPDX-License-Identifier: Apache-2.0
// The fixture of the BPF sampler's host tests (label `bpf`): loop devices
// on a file, fio issuing an exact number of direct 4 KiB I/Os, and exact
// agreement with /sys/block/loopN/stat and a tracefs witness. The tests
// need root, losetup and fio, and FAIL when any of those is missing.
#ifndef PATHWISE_TESTS_BPF_SAMPLER_HOST_FIXTURE_H_
#define PATHWISE_TESTS_BPF_SAMPLER_HOST_FIXTURE_H_

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
#include <functional>
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

namespace pathwise::bpf::host_test {

inline const model::OpStats* Find(const SamplerSnapshot& s, model::DevId dev,
                                  Op op) {
  for (const DeviceIo& d : s.io) {
    if (d.dev == dev && d.op == op) return &d.stats;
  }
  return nullptr;
}

// What the sampler counted for (dev, op) between two reads.
inline model::OpStats Delta(const SamplerSnapshot& before,
                            const SamplerSnapshot& after, model::DevId dev,
                            Op op) {
  const model::OpStats* a = Find(after, dev, op);
  if (!a) return {};
  const model::OpStats* b = Find(before, dev, op);
  return model::Delta(*a, b ? *b : model::OpStats{});
}

// Stops `witness` and returns the completions it saw that the kernel may
// have hid from `s`'s programs (those that ran while a thread of PID 1 was
// current, on kernels with that patch; 0 elsewhere): a test's exact counts
// miss at most these of the block layer's (ExpectCountedBut). Fails the
// test if the witness failed or lost events.
inline uint64_t HiddenCompletions(CompletionTrace& witness,
                                  const BpfSampler& s) {
  absl::StatusOr<CompletionCounts> traced = witness.Stop();
  EXPECT_TRUE(traced.ok()) << traced.status();
  if (!traced.ok()) return 0;
  EXPECT_FALSE(traced->overrun) << "the tracefs witness lost events";
  return s.init_context_hidden() ? traced->in_init : 0;
}

// `counted` of `seen` completions, `hidden` of which the witness saw run
// while a thread of PID 1 was current: none counted twice, none missing
// but those. The kernel hides such completions from BPF, but not every
// one: a run counted 301 reads of 300 with one such completion, the
// block layer's own count 300 exactly.
inline void ExpectCountedBut(uint64_t counted, uint64_t seen, uint64_t hidden,
                             const std::string& what = "") {
  EXPECT_LE(counted, seen) << "counted " << counted << ", seen " << seen
                           << what;
  EXPECT_GE(counted + hidden, seen) << "counted " << counted << " + hidden "
                                    << hidden << ", seen " << seen << what;
}

// An fd of the sampler's map `name` (the caller closes it), or -1.
inline int MapFdByName(const BpfSampler& s, const std::string& name) {
  for (uint32_t id : s.MapIds()) {
    const int fd = bpf_map_get_fd_by_id(id);
    if (fd < 0) continue;
    bpf_map_info info = {};
    uint32_t len = sizeof(info);
    if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0 && info.name == name) {
      return fd;
    }
    close(fd);
  }
  return -1;
}

// The I/O slots (pw_io_owner and pw_io_slot): each slot's owner, and
// whether its per-CPU values are all zero.
struct IoSlot {
  pw_io_owner owner = {};
  bool zero = true;
};
inline std::vector<IoSlot> IoSlots(const BpfSampler& s) {
  std::vector<IoSlot> out;
  const int owners = MapFdByName(s, "pw_io_owner");
  const int values = MapFdByName(s, "pw_io_slot");
  EXPECT_GE(owners, 0) << "no pw_io_owner map";
  EXPECT_GE(values, 0) << "no pw_io_slot map";
  if (owners >= 0 && values >= 0) {
    bpf_map_info info = {};
    uint32_t len = sizeof(info);
    EXPECT_EQ(bpf_obj_get_info_by_fd(owners, &info, &len), 0);
    const int ncpus = libbpf_num_possible_cpus();
    std::vector<pw_io_val> v(static_cast<size_t>(ncpus));
    for (uint32_t i = 0; i < info.max_entries; ++i) {
      IoSlot& slot = out.emplace_back();
      EXPECT_EQ(bpf_map_lookup_elem(owners, &i, &slot.owner), 0);
      EXPECT_EQ(bpf_map_lookup_elem(values, &i, v.data()), 0);
      for (const pw_io_val& c : v) {
        slot.zero = slot.zero && c.count == 0 && c.bytes == 0 &&
                    c.lat_sum_ns == 0 && c.buckets[0] == 0;
      }
    }
  }
  if (owners >= 0) close(owners);
  if (values >= 0) close(values);
  return out;
}

// Steps a test adds to ExactCountsCase: `before_io` runs once the sampler
// is attached, `after_io` on the test's device and the reads of the sampler
// around the I/O.
struct CaseHooks {
  // The test's device, once created (before the sampler is).
  std::function<void(model::DevId dev)> on_device;
  std::function<void(const BpfSampler&)> before_io;
  std::function<void(const BpfSampler&, model::DevId dev,
                     const SamplerSnapshot& before,
                     const SamplerSnapshot& after)>
      after_io;
  // How many own-stamp collisions the kernel's hiding of `hidden`
  // completions can explain (their words stay in their lines until their
  // tags are issued again); none unless a test says so.
  std::function<uint64_t(uint64_t hidden)> collisions_explained;
};

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
                       const std::string& engine, int iodepth,
                       const CaseHooks& hooks = {}) {
    std::string err;
    std::unique_ptr<LoopDevice> loop = LoopDevice::Create(&err);
    ASSERT_NE(loop, nullptr) << err;
    if (hooks.on_device) hooks.on_device(loop->dev());
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
    if (hooks.before_io) hooks.before_io(**sampler);

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
    // Collisions the hidden completions explain (CaseHooks), each an I/O
    // not counted; any other collision fails below.
    const uint64_t collisions =
        after->dropped[model::Index(DropReason::kStartCollision)];
    const uint64_t explained =
        hooks.collisions_explained
            ? std::min(collisions, hooks.collisions_explained(hidden))
            : 0;
    // Nothing else interferes with a loop device here, so every completion
    // the programs ran for was counted: at most what the witness saw on
    // PID 1's threads is missing, and the explained collisions.
    ExpectCountedBut(counted, seen, hidden + explained, drops);
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
    EXPECT_EQ(collisions, explained)
        << "own-stamp collisions the hidden completions do not explain:"
        << drops;
    if (explained > 0) {
      std::printf("%llu own-stamp collisions behind %llu hidden completions\n",
                  static_cast<unsigned long long>(explained),
                  static_cast<unsigned long long>(hidden));
    }
    // No failovers on a loop device.
    for (const PathSample& p : after->paths) {
      if (p.dev == loop->dev()) EXPECT_EQ(p.stats.failovers, 0u);
    }
    if (options.hctx_slots > 0) ExpectHctxSumsToDisk(*after, *loop);
    if (hooks.after_io) hooks.after_io(**sampler, loop->dev(), *before, *after);
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

}  // namespace pathwise::bpf::host_test

#endif  // PATHWISE_TESTS_BPF_SAMPLER_HOST_FIXTURE_H_

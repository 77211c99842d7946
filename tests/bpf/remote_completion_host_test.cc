// SPDX-License-Identifier: Apache-2.0
// Host test (label `bpf`) of the per hardware queue remote-completion count
// (--queues: pw_hctx's `remote`, decoded into HctxTotals::remote) against an
// independent witness. pathwise counts a completion as remote when the CPU
// its block_rq_complete program runs on is not rq->mq_ctx->cpu, the CPU
// whose software queue the request was taken from when it was submitted.
// The witness is tracefs: block_getrq fires on that CPU right after the
// request is taken, block_rq_complete on the completing one; paired by
// sector, their CPU columns must differ exactly as often as pathwise says.
//
// Scenario: two threads, each pinned to one of two CPUs, read and write
// their own half of a loop device at depth 1, so that wherever the loop
// worker or the backing I/O completes, some completions are on the other
// thread's CPU. Twice: with rq_affinity 0 (completions stay where they end)
// and 2 (the block layer moves each completion to its submitting CPU). The
// test fails if the witness saw no remote completion at all, since then
// nothing was checked; it asserts the relation between pathwise and the
// witness, never a particular scheduling.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "bpf/sampler.h"
#include "tests/bpf/completion_trace.h"
#include "tests/bpf/loop_device.h"

namespace pathwise::bpf {
namespace {

constexpr uint64_t kBlock = 4096;
// Per thread and phase: kN reads, then kN writes of the same blocks.
constexpr uint64_t kN = 1000;

// The first two CPUs this process may run on (empty if fewer).
std::vector<int> TwoAllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE && cpus.size() < 2; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  if (cpus.size() < 2) cpus.clear();
  return cpus;
}

// kN direct 4 KiB reads then kN writes of blocks [first, first + kN) of
// `path`, from the calling thread pinned to `cpu` (so that every request
// is taken from that CPU's software queue).
absl::Status PinnedIo(const std::string& path, int cpu, uint64_t first) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof(set), &set) != 0) {
    return absl::InternalError(
        absl::StrCat("sched_setaffinity(", cpu, "): ", std::strerror(errno)));
  }
  const int fd = open(path.c_str(), O_RDWR | O_DIRECT);
  if (fd < 0) {
    return absl::InternalError(
        absl::StrCat("open ", path, ": ", std::strerror(errno)));
  }
  void* buf = std::aligned_alloc(kBlock, kBlock);
  std::memset(buf, 0x5a, kBlock);
  absl::Status st;
  for (int pass = 0; pass < 2 && st.ok(); ++pass) {
    for (uint64_t i = 0; i < kN; ++i) {
      const off_t off = static_cast<off_t>((first + i) * kBlock);
      const ssize_t n = pass == 0 ? pread(fd, buf, kBlock, off)
                                  : pwrite(fd, buf, kBlock, off);
      if (n != static_cast<ssize_t>(kBlock)) {
        st = absl::InternalError(absl::StrCat(pass == 0 ? "pread" : "pwrite",
                                              " at ", off, ": ", n, " ",
                                              std::strerror(errno)));
        break;
      }
    }
  }
  std::free(buf);
  close(fd);
  return st;
}

// What pathwise counted for one disk, since the sampler attached.
struct Counted {
  uint64_t completed = 0;       // the disk's completions, every op
  uint64_t hctx_completed = 0;  // ... counted on its hardware queues
  uint64_t remote = 0;          // ... of those, remote
};

Counted CountedFor(const SamplerSnapshot& s, model::DevId dev) {
  Counted c;
  for (const DeviceIo& d : s.io) {
    if (d.dev == dev) c.completed += d.stats.completed;
  }
  for (const DiskHctxIo& h : s.hctx) {
    if (model::DevId::FromKernel(h.key.dev) != dev) continue;
    c.hctx_completed += h.totals.count;
    c.remote += h.totals.remote;
  }
  return c;
}

// Every loss the sampler reports (host-wide, so other disks may add to
// it): drop reasons, completions on no hardware queue, and the programs the
// kernel skipped because another BPF program ran on that CPU.
uint64_t ReportedLosses(const SamplerSnapshot& s) {
  uint64_t n = s.dropped_hctx;
  for (uint64_t d : s.dropped) n += d;
  for (const ProgramStats& p : s.programs) n += p.recursion_misses;
  return n;
}

struct PhaseResult {
  CompletionCounts witness;
  Counted counted;  // deltas over the phase
  uint64_t losses = 0;
};

class RemoteCompletionHostTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(geteuid(), 0u) << "the bpf tests need root (they load BPF "
                                "programs and create loop devices)";
    ASSERT_TRUE(HaveCommand("losetup")) << "losetup (util-linux) is missing";
    ASSERT_EQ(access("/sys/kernel/btf/vmlinux", R_OK), 0)
        << "kernel BTF /sys/kernel/btf/vmlinux is missing";
    cpus_ = TwoAllowedCpus();
    ASSERT_EQ(cpus_.size(), 2u)
        << "remote completions need two CPUs this process may run on";
  }

  // One phase with the device's rq_affinity set to `rq_affinity`.
  void RunPhase(BpfSampler& sampler, const LoopDevice& loop,
                const std::string& rq_affinity, PhaseResult* out) {
    const std::string knob =
        absl::StrCat("/sys/block/", loop.name(), "/queue/rq_affinity");
    {
      std::ofstream f(knob);
      f << rq_affinity << "\n";
      f.close();
      ASSERT_TRUE(f.good()) << "writing " << knob;
    }
    ASSERT_EQ(Slurp(knob), rq_affinity + "\n");
    absl::StatusOr<std::unique_ptr<CompletionTrace>> witness =
        CompletionTrace::Start(loop.dev().major << 20 | loop.dev().minor,
                               /*with_submit_cpu=*/true);
    ASSERT_TRUE(witness.ok()) << witness.status();
    absl::StatusOr<SamplerSnapshot> before = sampler.Read();
    ASSERT_TRUE(before.ok()) << before.status();

    absl::Status st[2];
    {
      std::vector<std::thread> threads;
      for (int t = 0; t < 2; ++t) {
        threads.emplace_back(
            [&, t] { st[t] = PinnedIo(loop.path(), cpus_[t], t * kN); });
      }
      for (std::thread& th : threads) th.join();
    }
    ASSERT_TRUE(st[0].ok()) << st[0];
    ASSERT_TRUE(st[1].ok()) << st[1];

    absl::StatusOr<SamplerSnapshot> after = sampler.Read();
    ASSERT_TRUE(after.ok()) << after.status();
    absl::StatusOr<CompletionCounts> traced = (*witness)->Stop();
    ASSERT_TRUE(traced.ok()) << traced.status();
    witness->reset();  // the instance goes before the next phase makes one

    const Counted b = CountedFor(*before, loop.dev());
    const Counted a = CountedFor(*after, loop.dev());
    ASSERT_GE(a.completed, b.completed);
    ASSERT_GE(a.hctx_completed, b.hctx_completed);
    ASSERT_GE(a.remote, b.remote);
    out->witness = *traced;
    out->counted = {a.completed - b.completed,
                    a.hctx_completed - b.hctx_completed, a.remote - b.remote};
    out->losses = ReportedLosses(*after) - ReportedLosses(*before);
  }

  // pathwise against the witness for one phase: equal, or short by no more
  // than the losses the sampler reports.
  void ExpectAgreement(const BpfSampler& sampler, const std::string& name,
                       const PhaseResult& r) {
    const CompletionCounts& w = r.witness;
    const Counted& c = r.counted;
    ASSERT_FALSE(w.overrun) << name << ": the tracefs witness lost events";
    EXPECT_EQ(w.unknown_tgid, 0u) << name;
    EXPECT_EQ(w.unpaired, 0u)
        << name << ": completions with no block_getrq of their sector";
    // At least the test's I/O (a probe of the device by udev after the
    // writer's close would add to both sides alike).
    EXPECT_GE(w.total, 2 * 2 * kN) << name
                                   << ": the witness missed I/O the "
                                      "test issued";
    // Completions while a thread of PID 1 was current never reach the
    // programs on kernels that hide them (BpfSampler::init_context_hidden).
    const bool hides = sampler.init_context_hidden();
    const uint64_t seen = w.total - (hides ? w.in_init : 0);
    const uint64_t seen_remote = w.remote - (hides ? w.remote_in_init : 0);
    const std::string numbers = absl::StrCat(
        name, ": witness completions=", w.total, " remote=", w.remote,
        " in_init=", w.in_init, " remote_in_init=", w.remote_in_init,
        " hidden_by_kernel=", hides, "; pathwise completed=", c.completed,
        " on_queues=", c.hctx_completed, " remote=", c.remote,
        " reported_losses=", r.losses);
    std::printf("%s\n", numbers.c_str());

    // Never more than happened.
    EXPECT_LE(c.completed, seen) << numbers;
    EXPECT_LE(c.hctx_completed, c.completed) << numbers;
    EXPECT_LE(c.remote, seen_remote) << numbers;
    // What is missing, the reported losses explain.
    EXPECT_LE(seen - std::min(seen, c.hctx_completed), r.losses) << numbers;
    EXPECT_LE(seen_remote - std::min(seen_remote, c.remote), r.losses)
        << numbers;
    if (r.losses == 0) {
      EXPECT_EQ(c.completed, seen) << numbers;
      EXPECT_EQ(c.hctx_completed, seen) << numbers;
      EXPECT_EQ(c.remote, seen_remote) << numbers;
    }
  }

  std::vector<int> cpus_;
};

TEST_F(RemoteCompletionHostTest, RemoteCountMatchesTracefsWitness) {
  SamplerOptions o;
  o.nvme = false;
  o.hctx_slots = HctxSlotsFor(0);
  o.enable_bpf_stats = true;  // recursion misses count only with stats on
  absl::StatusOr<std::unique_ptr<BpfSampler>> sampler = BpfSampler::Create(o);
  ASSERT_TRUE(sampler.ok()) << sampler.status();
  std::string err;
  std::unique_ptr<LoopDevice> loop = LoopDevice::Create(&err);
  ASSERT_NE(loop, nullptr) << err;

  PhaseResult as_ended, forced_local;
  // 0: a completion runs where the loop worker or the backing I/O ends it.
  ASSERT_NO_FATAL_FAILURE(RunPhase(**sampler, *loop, "0", &as_ended));
  // 2: the block layer sends each completion to its submitting CPU.
  ASSERT_NO_FATAL_FAILURE(RunPhase(**sampler, *loop, "2", &forced_local));
  ExpectAgreement(**sampler, "rq_affinity=0", as_ended);
  ExpectAgreement(**sampler, "rq_affinity=2", forced_local);

  // The scenario must have exercised both answers, or the agreement above
  // proves nothing about the count.
  ASSERT_GT(as_ended.witness.remote, 0u)
      << "SCENARIO DID NOT EXERCISE REMOTE COMPLETIONS: tracefs saw every "
         "completion on its submitting CPU with two submitters pinned to "
         "CPUs "
      << cpus_[0] << " and " << cpus_[1]
      << ", so pathwise's remote count was not checked";
  const uint64_t local =
      (as_ended.witness.total - as_ended.witness.remote) +
      (forced_local.witness.total - forced_local.witness.remote);
  ASSERT_GT(local, 0u) << "the witness saw no local completion at all";
}

}  // namespace
}  // namespace pathwise::bpf

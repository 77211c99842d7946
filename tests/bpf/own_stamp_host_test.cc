// SPDX-License-Identifier: Apache-2.0
// Host tests of the own issue stamps (label `bpf`): pw_start is an array of
// lines whose slots other requests share, so these tests fill slots with
// other requests' stamps from userspace and check that a request stamps
// and finds its own slot in its own line (exact counts, no latency taken
// from another request's stamp, the other slots untouched), that a line
// with every slot live counts each start it cannot take as
// start_collision, and that a slot whose stamp is older than
// PW_START_STALE_NS is taken over. See sampler_host_fixture.h.
#include <bpf/bpf.h>
#include <gtest/gtest.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "tests/bpf/sampler_host_fixture.h"
#include "tests/bpf/start_map.h"

namespace pathwise::bpf {
namespace {

using host_test::BpfHostTest;
using host_test::CaseHooks;
using host_test::Delta;
using host_test::StartMap;

uint64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);  // bpf_ktime_get_ns()'s clock
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

// Latencies of (dev, op) between two reads above 2^30 ns (1.07 s): none on
// a loop device over a file, many if a completion took a stamp written
// seconds earlier for another request.
uint64_t SlowerThanASecond(const SamplerSnapshot& before,
                           const SamplerSnapshot& after, model::DevId dev,
                           Op op) {
  const model::OpStats d = host_test::Delta(before, after, dev, op);
  if (!d.latency) return 0;
  uint64_t n = 0;
  const auto& b = d.latency->buckets();
  for (size_t i = 1; i < b.size(); ++i) {
    if (model::LatencyHistogram::UpperBoundNs(i - 1) >= (uint64_t{1} << 30)) {
      n += b[i];
    }
  }
  return n;
}

using OwnStampHostTest = BpfHostTest;

// A fresh loop device, a sampler in own-stamp mode and its pw_start map.
struct OwnStampRig {
  std::unique_ptr<LoopDevice> loop;
  std::unique_ptr<BpfSampler> sampler;
  std::unique_ptr<StartMap> map;
};
void MakeRig(OwnStampRig& rig) {
  std::string err;
  rig.loop = LoopDevice::Create(&err);
  ASSERT_NE(rig.loop, nullptr) << err;
  SamplerOptions o;
  o.force_own_start = true;
  absl::StatusOr<std::unique_ptr<BpfSampler>> s = BpfSampler::Create(o);
  ASSERT_TRUE(s.ok()) << s.status();
  rig.sampler = *std::move(s);
  rig.loop->Settle();
  rig.map = std::make_unique<StartMap>(*rig.sampler);
  ASSERT_TRUE(rig.map->ok()) << "no pw_start array of pw_start_line values";
}

// Three of the eight slots of every line of the device's tags hold other
// requests' stamps, two seconds old, so that a request whose home slot is
// one of them stamps another slot of its line. Every request must still
// stamp a free slot at issue and take exactly its own stamp at completion:
// exact counts, no collision (but those a burst of hidden completions
// explains, below), no latency near two seconds, and the other requests'
// slots untouched. (At most 2 I/Os in flight, a flush beside
// them, in a line's five free slots: room for two words left behind by
// completions the kernel hid from BPF (sampler_host_fixture.h), which
// stay until their tag is issued again; at 4 in flight such words made a
// line full now and then. Only the device's lines: another disk's burst
// of six tags in a row would fill one of them.)
TEST_F(OwnStampHostTest, EachRequestFindsItsOwnStampInItsLine) {
  constexpr uint32_t kForeignSlots = 3;
  // Its tags: below its queue depth (128) or, with an I/O scheduler, its
  // nr_requests (256).
  constexpr uint32_t kTags = 256;
  const uint64_t foreign_ns = MonotonicNs() - 2'000'000'000;
  uint32_t kdev = 0;
  std::vector<uint32_t> lines;
  CaseHooks hooks;
  hooks.on_device = [&](model::DevId dev) {
    kdev = dev.major << 20 | dev.minor;
  };
  hooks.before_io = [&](const BpfSampler& s) {
    StartMap m(s);
    ASSERT_TRUE(m.ok()) << "no pw_start array of pw_start_line values";
    lines = m.LinesOf(kdev, kTags);
    m.FillForeign(kForeignSlots, foreign_ns, lines);
  };
  hooks.after_io = [&](const BpfSampler& s, model::DevId dev,
                       const SamplerSnapshot& before,
                       const SamplerSnapshot& after) {
    StartMap m(s);
    ASSERT_TRUE(m.ok());
    EXPECT_EQ(m.ForeignIntact(kForeignSlots, foreign_ns, lines),
              lines.size() * kForeignSlots)
        << "a completion freed, or a start overwrote, another request's slot";
    for (Op op : {Op::kRead, Op::kWrite}) {
      EXPECT_EQ(SlowerThanASecond(before, after, dev, op), 0u)
          << "a completion took another request's stamp";
    }
  };
  // A burst of completions the kernel hid (ten in a row, seen once under
  // load) leaves its words in consecutive slots; three fill a line's room
  // beside one other I/O and a flush, and until their tags are issued
  // again the line's other five tags can collide: five per three hidden
  // while tags are handed out in turn, allowed as two per hidden. A start
  // that found no free slot where there was one collides thousands of
  // times here and still fails.
  hooks.collisions_explained = [](uint64_t hidden) -> uint64_t {
    constexpr uint64_t kToFillALine = PW_START_SLOTS - kForeignSlots - 2;
    return hidden >= kToFillALine ? 2 * hidden : 0;
  };
  SamplerOptions o;
  o.force_own_start = true;
  ExactCountsCase(o, /*expect_own_start=*/true, "libaio", 2, hooks);
  EXPECT_GE(lines.size(), kTags / PW_START_SLOTS);
}

// Every slot of every line holds another live request's stamp: each
// own-stamp start is dropped and counted as start_collision, its completion
// as no_start_time, and nothing of the device is counted; once the slots are
// free again, counting is exact.
TEST_F(OwnStampHostTest, FullLinesCountEveryStartAsACollision) {
  OwnStampRig rig;
  ASSERT_NO_FATAL_FAILURE(MakeRig(rig));
  LoopDevice* loop = rig.loop.get();
  BpfSampler& sampler = *rig.sampler;
  StartMap& m = *rig.map;
  const uint64_t foreign_ns = MonotonicNs();
  m.FillForeign(PW_START_SLOTS, foreign_ns);

  // Completions the kernel hid from BPF (sampler_host_fixture.h) are told
  // from a loss by a tracefs witness, one per half of the test.
  const uint32_t kdev = loop->dev().major << 20 | loop->dev().minor;

  constexpr uint64_t kN = 500;
  absl::StatusOr<SamplerSnapshot> before = sampler.Read();
  ASSERT_TRUE(before.ok()) << before.status();
  std::optional<BlockStat> sys_before = ReadBlockStat(loop->name());
  ASSERT_TRUE(sys_before.has_value());
  absl::StatusOr<std::unique_ptr<CompletionTrace>> witness1 =
      CompletionTrace::Start(kdev);
  ASSERT_TRUE(witness1.ok()) << witness1.status();
  CmdResult r = Fio(loop->path(), "randread", kN);
  ASSERT_EQ(r.status, 0) << r.output;
  absl::StatusOr<SamplerSnapshot> after = sampler.Read();
  ASSERT_TRUE(after.ok()) << after.status();
  std::optional<BlockStat> sys_after = ReadBlockStat(loop->name());
  ASSERT_TRUE(sys_after.has_value());
  // The block layer's count, not fio's: another reader of the device (a
  // udev probe, late on a loaded host) may add a few reads.
  const uint64_t seen1 = sys_after->reads - sys_before->reads;
  ASSERT_GE(seen1, kN);
  const uint64_t hidden1 = host_test::HiddenCompletions(**witness1, sampler);

  auto dropped = [&](const SamplerSnapshot& a, const SamplerSnapshot& b,
                     DropReason reason) {
    return b.dropped[model::Index(reason)] - a.dropped[model::Index(reason)];
  };
  EXPECT_EQ(Delta(*before, *after, loop->dev(), Op::kRead).completed, 0u);
  // Other disks' own-stamp starts collide too: at least the device's.
  EXPECT_GE(dropped(*before, *after, DropReason::kStartCollision), kN);
  EXPECT_GE(dropped(*before, *after, DropReason::kNoStartTime) + hidden1,
            seen1);
  EXPECT_EQ(m.ForeignIntact(PW_START_SLOTS, foreign_ns),
            uint64_t{m.lines()} * PW_START_SLOTS)
      << "a start took a live request's slot";

  m.Clear();
  absl::StatusOr<SamplerSnapshot> cleared = sampler.Read();
  ASSERT_TRUE(cleared.ok()) << cleared.status();
  sys_before = ReadBlockStat(loop->name());
  ASSERT_TRUE(sys_before.has_value());
  absl::StatusOr<std::unique_ptr<CompletionTrace>> witness =
      CompletionTrace::Start(kdev);
  ASSERT_TRUE(witness.ok()) << witness.status();
  r = Fio(loop->path(), "randread", kN);
  ASSERT_EQ(r.status, 0) << r.output;
  absl::StatusOr<SamplerSnapshot> last = sampler.Read();
  ASSERT_TRUE(last.ok()) << last.status();
  sys_after = ReadBlockStat(loop->name());
  ASSERT_TRUE(sys_after.has_value());
  const uint64_t seen = sys_after->reads - sys_before->reads;
  EXPECT_GE(seen, kN);
  const uint64_t hidden = host_test::HiddenCompletions(**witness, sampler);
  const uint64_t counted =
      Delta(*cleared, *last, loop->dev(), Op::kRead).completed;
  host_test::ExpectCountedBut(counted, seen, hidden,
                              absl::StrCat(" (fio's ", kN, ")"));
  EXPECT_EQ(dropped(*cleared, *last, DropReason::kStartCollision), 0u);
}

// Every slot of every line holds a stamp older than PW_START_STALE_NS (a
// request whose completion was never seen): starts take those slots over,
// and the counts are exact with no collision and no stale latency.
TEST_F(OwnStampHostTest, StaleSlotsAreTakenOver) {
  const uint64_t now = MonotonicNs();
  const uint64_t age = PW_START_STALE_NS + 10'000'000'000;
  ASSERT_GT(now, age) << "the test needs an uptime above "
                      << age / 1'000'000'000 << " s, this host has "
                      << now / 1'000'000'000 << " s";
  const uint64_t stale_ns = now - age;
  uint32_t lines = 0;
  CaseHooks hooks;
  hooks.before_io = [&](const BpfSampler& s) {
    StartMap m(s);
    ASSERT_TRUE(m.ok()) << "no pw_start array of pw_start_line values";
    lines = m.lines();
    m.FillForeign(PW_START_SLOTS, stale_ns);
  };
  hooks.after_io = [&](const BpfSampler& s, model::DevId dev,
                       const SamplerSnapshot& before,
                       const SamplerSnapshot& after) {
    for (Op op : {Op::kRead, Op::kWrite}) {
      EXPECT_EQ(SlowerThanASecond(before, after, dev, op), 0u)
          << "a completion took a stale stamp";
    }
    StartMap m(s);
    ASSERT_TRUE(m.ok());
    EXPECT_LT(m.ForeignIntact(PW_START_SLOTS, stale_ns),
              uint64_t{lines} * PW_START_SLOTS)
        << "no stale slot was taken over";
  };
  SamplerOptions o;
  o.force_own_start = true;
  ExactCountsCase(o, /*expect_own_start=*/true, "psync", 1, hooks);
}

// Slots rewritten while their requests are in flight, as by another CPU
// stamping other requests, two seconds earlier: a completion never takes
// another request's word as its stamp. While fio runs, a thread fills every
// line the loop device's tags use with such words, then empties them, and
// again: a request issued into an empty line and completed after the fill
// finds its slot rewritten, and must count no_start_time, never a latency
// near two seconds (one issued into a full line counts start_collision).
// Every read is either counted, a no_start_time drop, or hidden from BPF by
// the kernel (counted by a tracefs witness).
TEST_F(OwnStampHostTest, SlotsRewrittenInFlightAreNeverMisread) {
  OwnStampRig rig;
  ASSERT_NO_FATAL_FAILURE(MakeRig(rig));
  LoopDevice* loop = rig.loop.get();
  BpfSampler& sampler = *rig.sampler;
  StartMap& m = *rig.map;
  // The loop device's tags: below its queue depth (128) or, with an I/O
  // scheduler, its nr_requests (256); they fall in distinct lines.
  constexpr uint32_t kTags = 256;
  ASSERT_GE(m.lines(), kTags / PW_START_SLOTS + 1);
  const uint32_t dev = loop->dev().major << 20 | loop->dev().minor;
  const uint64_t others_ns = MonotonicNs() - 2'000'000'000;

  // Rounds until completions found their slot rewritten a few times (a
  // loaded host rewrites less often), at most five.
  constexpr uint64_t kN = 3000;
  absl::StatusOr<SamplerSnapshot> before = sampler.Read();
  ASSERT_TRUE(before.ok()) << before.status();
  absl::StatusOr<SamplerSnapshot> after = before;
  uint64_t sweeps = 0, rounds = 0;
  // Completions the kernel hid from BPF (sampler_host_fixture.h) are told
  // from a loss by a tracefs witness.
  absl::StatusOr<std::unique_ptr<CompletionTrace>> witness =
      CompletionTrace::Start(dev);
  ASSERT_TRUE(witness.ok()) << witness.status();
  auto hits = [&] {
    auto d = [&](DropReason reason) {
      return after->dropped[model::Index(reason)] -
             before->dropped[model::Index(reason)];
    };
    const uint64_t ns = d(DropReason::kNoStartTime),
                   c = d(DropReason::kStartCollision);
    return ns > c ? ns - c : 0;
  };
  while (rounds < 5 && hits() < 5) {
    std::atomic<bool> stop{false};
    std::thread rewriter([&] {
      while (!stop.load()) {
        m.FillOthers(dev, kTags, others_ns, /*full=*/sweeps % 2 == 0);
        ++sweeps;
      }
    });
    CmdResult r = Fio(loop->path(), "randread", kN);
    stop = true;
    rewriter.join();
    ASSERT_EQ(r.status, 0) << r.output;
    ++rounds;
    after = sampler.Read();
    ASSERT_TRUE(after.ok()) << after.status();
  }

  const uint64_t hidden = host_test::HiddenCompletions(**witness, sampler);
  auto dropped = [&](DropReason reason) {
    return after->dropped[model::Index(reason)] -
           before->dropped[model::Index(reason)];
  };
  const uint64_t counted =
      Delta(*before, *after, loop->dev(), Op::kRead).completed;
  const uint64_t no_start = dropped(DropReason::kNoStartTime);
  EXPECT_EQ(SlowerThanASecond(*before, *after, loop->dev(), Op::kRead), 0u)
      << "a completion took another request's word";
  // Completions found their slot rewritten (more no_start_time than starts
  // lost to full lines; else this test proves nothing), and requests issued
  // into emptied lines were counted.
  const uint64_t collisions = dropped(DropReason::kStartCollision);
  EXPECT_GT(no_start, collisions) << sweeps << " sweeps hit no request";
  EXPECT_GT(counted, 0u);
  EXPECT_GE(counted + no_start + hidden, rounds * kN)
      << "reads neither counted nor dropped (" << hidden
      << " hidden by the kernel)";
  EXPECT_LE(counted, rounds * kN);
  RecordProperty("rounds", std::to_string(rounds));
  RecordProperty("sweeps", std::to_string(sweeps));
  RecordProperty("no_start_time", std::to_string(no_start));
  RecordProperty("counted", std::to_string(counted));
  RecordProperty("hidden", std::to_string(hidden));
  RecordProperty("start_collision", std::to_string(collisions));
}

// The own stamps at a queue depth above the slots of a line: io_uring, 64
// in flight on one hardware queue.
TEST_F(OwnStampHostTest, ExactCountsAtQueueDepth64) {
  SamplerOptions o;
  o.force_own_start = true;
  ExactCountsCase(o, /*expect_own_start=*/true, "io_uring", 64);
}

}  // namespace
}  // namespace pathwise::bpf

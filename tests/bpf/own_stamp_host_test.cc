// SPDX-License-Identifier: Apache-2.0
// Host tests of the own issue stamps (label `bpf`): pw_start is a
// set-associative array whose ways other requests share, so these tests
// fill ways with other requests' stamps from userspace and check that a
// request stamps and finds its own way in its own set (exact counts, no
// latency taken from another request's stamp, the other ways untouched),
// that a set with every way live counts each start it cannot take as
// start_collision, and that a way whose stamp is older than
// PW_START_STALE_NS is taken over. See sampler_host_fixture.h.
#include <bpf/bpf.h>
#include <gtest/gtest.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

#include "tests/bpf/sampler_host_fixture.h"

namespace pathwise::bpf {
namespace {

using host_test::BpfHostTest;
using host_test::CaseHooks;
using host_test::Delta;

uint64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);  // bpf_ktime_get_ns()'s clock
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

// An address no request has: small, aligned, unique per (set, way).
uint64_t ForeignRq(uint32_t set, uint32_t way) {
  return 0x10000 + (uint64_t{set} * PW_START_WAYS + way) * 64;
}

// The sampler's pw_start map, opened by id; closes on destruction.
class StartMap {
 public:
  explicit StartMap(const BpfSampler& s) {
    for (uint32_t id : s.MapIds()) {
      const int fd = bpf_map_get_fd_by_id(id);
      if (fd < 0) continue;
      bpf_map_info info = {};
      uint32_t len = sizeof(info);
      if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0 &&
          std::string(info.name) == "pw_start") {
        fd_ = fd;
        sets_ = info.max_entries;
        value_size_ = info.value_size;
        return;
      }
      close(fd);
    }
  }
  ~StartMap() {
    if (fd_ >= 0) close(fd_);
  }
  StartMap(const StartMap&) = delete;
  StartMap& operator=(const StartMap&) = delete;

  bool ok() const { return fd_ >= 0 && value_size_ == sizeof(pw_start_set); }
  uint32_t sets() const { return sets_; }

  pw_start_set Get(uint32_t i) const {
    pw_start_set s = {};
    EXPECT_EQ(bpf_map_lookup_elem(fd_, &i, &s), 0) << "set " << i;
    return s;
  }
  void Put(uint32_t i, const pw_start_set& s) {
    EXPECT_EQ(bpf_map_update_elem(fd_, &i, &s, BPF_ANY), 0) << "set " << i;
  }
  // Ways [0, ways) of every set: another request's stamp taken at `ns`.
  void FillForeign(uint32_t ways, uint64_t ns) {
    for (uint32_t i = 0; i < sets_; ++i) {
      pw_start_set s = Get(i);
      for (uint32_t w = 0; w < ways; ++w) s.way[w] = {ForeignRq(i, w), ns};
      Put(i, s);
    }
  }
  // How many of ways [0, ways) of all sets still hold what FillForeign
  // wrote.
  uint64_t ForeignIntact(uint32_t ways, uint64_t ns) const {
    uint64_t n = 0;
    for (uint32_t i = 0; i < sets_; ++i) {
      const pw_start_set s = Get(i);
      for (uint32_t w = 0; w < ways; ++w) {
        n += s.way[w].rq == ForeignRq(i, w) && s.way[w].ns == ns;
      }
    }
    return n;
  }
  void Clear() {
    for (uint32_t i = 0; i < sets_; ++i) Put(i, pw_start_set{});
  }

 private:
  int fd_ = -1;
  uint32_t sets_ = 0;
  uint32_t value_size_ = 0;
};

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

// Two of the four ways of every set hold other requests' stamps, two
// seconds old. Every request must still stamp a free way of its set at
// issue and take exactly its own stamp at completion: exact counts, no
// collision, no latency near two seconds, and the other requests' ways
// untouched.
TEST_F(OwnStampHostTest, EachRequestFindsItsOwnStampInItsSet) {
  constexpr uint32_t kForeignWays = 2;
  const uint64_t foreign_ns = MonotonicNs() - 2'000'000'000;
  uint32_t sets = 0;
  CaseHooks hooks;
  hooks.before_io = [&](const BpfSampler& s) {
    StartMap m(s);
    ASSERT_TRUE(m.ok()) << "no pw_start array of pw_start_set values";
    sets = m.sets();
    m.FillForeign(kForeignWays, foreign_ns);
  };
  hooks.after_io = [&](const BpfSampler& s, model::DevId dev,
                       const SamplerSnapshot& before,
                       const SamplerSnapshot& after) {
    StartMap m(s);
    ASSERT_TRUE(m.ok());
    EXPECT_EQ(m.ForeignIntact(kForeignWays, foreign_ns),
              uint64_t{sets} * kForeignWays)
        << "a completion freed, or a start overwrote, another request's way";
    for (Op op : {Op::kRead, Op::kWrite}) {
      EXPECT_EQ(SlowerThanASecond(before, after, dev, op), 0u)
          << "a completion took another request's stamp";
    }
  };
  SamplerOptions o;
  o.force_own_start = true;
  ExactCountsCase(o, /*expect_own_start=*/true, "libaio", 16, hooks);
  EXPECT_GT(sets, 0u);
}

// Every way of every set holds another live request's stamp: each own-stamp
// start is dropped and counted as start_collision, its completion as
// no_start_time, and nothing of the device is counted; once the ways are
// free again, counting is exact.
TEST_F(OwnStampHostTest, FullSetsCountEveryStartAsACollision) {
  std::string err;
  std::unique_ptr<LoopDevice> loop = LoopDevice::Create(&err);
  ASSERT_NE(loop, nullptr) << err;
  SamplerOptions o;
  o.force_own_start = true;
  absl::StatusOr<std::unique_ptr<BpfSampler>> sampler = BpfSampler::Create(o);
  ASSERT_TRUE(sampler.ok()) << sampler.status();
  loop->Settle();
  StartMap m(**sampler);
  ASSERT_TRUE(m.ok()) << "no pw_start array of pw_start_set values";
  const uint64_t foreign_ns = MonotonicNs();
  m.FillForeign(PW_START_WAYS, foreign_ns);

  constexpr uint64_t kN = 500;
  absl::StatusOr<SamplerSnapshot> before = (*sampler)->Read();
  ASSERT_TRUE(before.ok()) << before.status();
  std::optional<BlockStat> sys_before = ReadBlockStat(loop->name());
  ASSERT_TRUE(sys_before.has_value());
  CmdResult r = Fio(loop->path(), "randread", kN);
  ASSERT_EQ(r.status, 0) << r.output;
  absl::StatusOr<SamplerSnapshot> after = (*sampler)->Read();
  ASSERT_TRUE(after.ok()) << after.status();
  std::optional<BlockStat> sys_after = ReadBlockStat(loop->name());
  ASSERT_TRUE(sys_after.has_value());
  ASSERT_EQ(sys_after->reads - sys_before->reads, kN);

  auto dropped = [&](const SamplerSnapshot& a, const SamplerSnapshot& b,
                     DropReason reason) {
    return b.dropped[model::Index(reason)] - a.dropped[model::Index(reason)];
  };
  EXPECT_EQ(Delta(*before, *after, loop->dev(), Op::kRead).completed, 0u);
  // Other disks' own-stamp starts collide too: at least the device's.
  EXPECT_GE(dropped(*before, *after, DropReason::kStartCollision), kN);
  EXPECT_GE(dropped(*before, *after, DropReason::kNoStartTime), kN);
  EXPECT_EQ(m.ForeignIntact(PW_START_WAYS, foreign_ns),
            uint64_t{m.sets()} * PW_START_WAYS)
      << "a start took a live request's way";

  m.Clear();
  absl::StatusOr<SamplerSnapshot> cleared = (*sampler)->Read();
  ASSERT_TRUE(cleared.ok()) << cleared.status();
  r = Fio(loop->path(), "randread", kN);
  ASSERT_EQ(r.status, 0) << r.output;
  absl::StatusOr<SamplerSnapshot> last = (*sampler)->Read();
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ(Delta(*cleared, *last, loop->dev(), Op::kRead).completed, kN);
  EXPECT_EQ(dropped(*cleared, *last, DropReason::kStartCollision), 0u);
}

// Every way of every set holds a stamp older than PW_START_STALE_NS (a
// request whose completion was never seen): starts take those ways over,
// and the counts are exact with no collision and no stale latency.
TEST_F(OwnStampHostTest, StaleWaysAreTakenOver) {
  const uint64_t now = MonotonicNs();
  const uint64_t age = PW_START_STALE_NS + 10'000'000'000;
  ASSERT_GT(now, age) << "the test needs an uptime above "
                      << age / 1'000'000'000 << " s, this host has "
                      << now / 1'000'000'000 << " s";
  const uint64_t stale_ns = now - age;
  uint32_t sets = 0;
  CaseHooks hooks;
  hooks.before_io = [&](const BpfSampler& s) {
    StartMap m(s);
    ASSERT_TRUE(m.ok()) << "no pw_start array of pw_start_set values";
    sets = m.sets();
    m.FillForeign(PW_START_WAYS, stale_ns);
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
    EXPECT_LT(m.ForeignIntact(PW_START_WAYS, stale_ns),
              uint64_t{sets} * PW_START_WAYS)
        << "no stale way was taken over";
  };
  SamplerOptions o;
  o.force_own_start = true;
  ExactCountsCase(o, /*expect_own_start=*/true, "psync", 1, hooks);
}

// The own stamps at a queue depth above the ways of a set: io_uring, 64
// in flight on one hardware queue.
TEST_F(OwnStampHostTest, ExactCountsAtQueueDepth64) {
  SamplerOptions o;
  o.force_own_start = true;
  ExactCountsCase(o, /*expect_own_start=*/true, "io_uring", 64);
}

}  // namespace
}  // namespace pathwise::bpf

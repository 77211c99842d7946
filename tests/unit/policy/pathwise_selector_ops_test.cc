// SPDX-License-Identifier: Apache-2.0
// The pathwise selector with reads and writes: a path can serve each op group
// at its own latency, and a queue can be in one direction only.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <tuple>
#include <vector>

#include "policy/pathwise_selector.h"
#include "tests/unit/policy/selector_fixture.h"

namespace pathwise::policy {
namespace {

// Reads and writes alternate; `n` completions on `path`, one every `gap`
// from `start`, the reads `read_ns` long and the writes `write_ns`, each
// submitted its latency before it completes, all in time order.
void CompleteMixed(PathwiseSelector& s, int path, int n, int64_t start,
                   int64_t gap, int64_t read_ns, int64_t write_ns) {
  // (time, 0 submit / 1 complete, op, latency): submissions first on ties.
  using Event = std::tuple<int64_t, int, model::OpGroup, int64_t>;
  std::vector<Event> events;
  for (int k = 0; k < n; ++k) {
    const bool read = k % 2 == 0;
    const int64_t lat = read ? read_ns : write_ns;
    const model::OpGroup op =
        read ? model::OpGroup::kRead : model::OpGroup::kWrite;
    events.emplace_back(start + k * gap - lat, 0, op, lat);
    events.emplace_back(start + k * gap, 1, op, lat);
  }
  std::sort(events.begin(), events.end());
  for (const auto& [t, done, op, lat] : events) {
    const IoRequest io{.op = op};
    if (done == 0) {
      s.OnSubmit(path, io, t);
    } else {
      s.OnComplete(path, io, {.now_ns = t, .latency_ns = lat});
    }
  }
}

// A path can serve reads and writes at different latencies (a write cache,
// a link busy in one direction). Each I/O goes to the path fastest at its
// own op: here path 0 reads in 2 ms and writes in 6, path 1 the other way
// round. By the mix's mean (4 ms on both) the two paths looked alike, and
// half of each op went to the path three times slower at it. The ops'
// latencies are learnt where the path's load is low (its least loaded
// level, I/Os sent to it empty), as `unloaded` is: here 2 outstanding. (A
// path never below its knee gives none, and both ops go by the mix's.)
TEST(Pathwise, ReadsAndWritesGoWhereEachIsFast) {
  PathwiseSelector s({.window_ns = 1 * kSec});
  const std::vector<PathInfo> paths = {Path(), Path()};
  s.SetPaths(paths);
  // The ops in random order: alternating, each op found its own path empty
  // and the two never met.
  const auto sent = ClosedLoopOps(s, 2, 0.5, 2 * kSec, 12 * kSec,
                                  [](int p, bool read, int64_t) {
                                    return (read == (p == 0) ? 2 : 6) * kMs;
                                  });
  // 10 s at 2 / 2 ms: ~10k I/Os, each op on its fast path but for probes.
  EXPECT_GT(sent[0][0], 15 * sent[0][1]) << sent[0][0] << " " << sent[0][1];
  EXPECT_GT(sent[1][1], 15 * sent[1][0]) << sent[1][1] << " " << sent[1][0];
  EXPECT_GT(sent[0][0] + sent[1][1], 9000);
}

// A queue only one op group has is a queue: here the writes wait (the link
// is busy in their direction) while the reads, three times faster, still
// come back at their unloaded latency. Against the mix's unloaded latency
// the reads' lowest hid the queue and the cap kept growing past the knee.
TEST(Pathwise, AQueueInOneOpGroupHoldsTheCap) {
  PathwiseSelector s({.window_ns = 1 * kSec});
  const std::vector<PathInfo> paths = {Path(), Path()};
  s.SetPaths(paths);
  // About 1.5 in flight: reads 1 ms, writes 3 ms, no queue.
  CompleteMixed(s, 1, 400, 10 * kMs, 1 * kMs, 1 * kMs, 3 * kMs);
  // About 6 in flight (a mean of 2.75 ms every 0.458 ms): the reads still
  // 1 ms, the writes 4.5 ms, every write 1.5x its unloaded latency. The
  // knee reads 6 / 1.5 = 4.
  CompleteMixed(s, 1, 2000, 500 * kMs, 458 * kUs, 1 * kMs, 9 * kMs / 2);
  EXPECT_LE(s.cap(1), 5);
}

// A path whose writes are slower than its reads is not queued for that:
// path 1 reads in 1 ms and writes in 3, with no knee (its target serves any
// number at once), path 0 serves both in 20 ms. At 32 outstanding every I/O
// belongs on path 1 (160k in 10 s); path 0 should see only its probes.
// Each op's queue is read against that op's own unloaded latency. Read
// against the path's base (its reads' latency), every write shows a queue
// 3x its unloaded latency: path 1's cap falls to 2 and it serves 6.7k of
// 22k I/Os. A busy path seldom measures an op alone (no I/O sent to it
// empty, no completion at a low load level): an op without an unloaded
// latency of its own took the path's, here the reads', and path 1's cap
// settled at 24, 788 I/Os going to path 0. Now such an op's is at least
// its own lowest latency (the cap reaches 40, path 0 gets 31 probes).
TEST(Pathwise, AnOpSlowerThanThePathsBaseIsNoQueue) {
  PathwiseSelector s({.window_ns = 1 * kSec});
  const std::vector<PathInfo> paths = {Path(), Path()};
  s.SetPaths(paths);
  const auto sent = ClosedLoopOps(
      s, 32, 0.5, 2 * kSec, 12 * kSec, [](int p, bool read, int64_t) {
        return p == 0 ? 20 * kMs : (read ? 1 : 3) * kMs;
      });
  const int fast = sent[0][1] + sent[1][1];
  const int slow = sent[0][0] + sent[1][0];
  EXPECT_GT(fast, 155000) << fast << " " << slow;
  EXPECT_LT(slow, 100) << fast << " " << slow;
  EXPECT_GE(s.cap(1), 32);
}

}  // namespace
}  // namespace pathwise::policy

// SPDX-License-Identifier: Apache-2.0
// Helpers for the selector tests: paths, I/Os and time units.
#ifndef PATHWISE_TESTS_UNIT_POLICY_SELECTOR_FIXTURE_H_
#define PATHWISE_TESTS_UNIT_POLICY_SELECTOR_FIXTURE_H_

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <functional>
#include <queue>
#include <random>
#include <tuple>
#include <vector>

#include "policy/selector.h"

namespace pathwise::policy {

constexpr int64_t kUs = 1000;
constexpr int64_t kMs = 1000 * kUs;
constexpr int64_t kSec = 1000 * kMs;

inline PathInfo Path(bool usable = true, int node = -1, bool optimized = true) {
  return PathInfo{.usable = usable, .optimized = optimized, .numa_node = node};
}

inline IoRequest Read(int cpu = 0, int node = 0) {
  return IoRequest{.op = model::OpGroup::kRead, .cpu = cpu, .numa_node = node};
}

// `n` completions on `path`, one every `gap` from `start`, each `latency`
// long: each submitted `latency` before it completes, in time order, so
// that they overlap as a real stream does (latency / gap of them in flight
// at once, Little's law). The in-flight count is the same after.
inline void Complete(Selector& s, int path, int n, int64_t start, int64_t gap,
                     int64_t latency) {
  int next_submit = 0;
  for (int k = 0; k < n; ++k) {
    const int64_t now = start + k * gap;
    for (; next_submit < n && start + next_submit * gap - latency <= now;
         ++next_submit) {
      s.OnSubmit(path, Read(), start + next_submit * gap - latency);
    }
    s.OnComplete(path, Read(), {.now_ns = now, .latency_ns = latency});
  }
}

// Selects, submits and completes one I/O at `now` with the latency of the
// chosen path; returns the path.
inline int RoundTrip(Selector& s, const IoRequest& io, int64_t now,
                     const std::vector<int64_t>& latency) {
  const int p = s.Select(io);
  if (p == kNoPath) return p;
  s.OnSubmit(p, io, now);
  s.OnComplete(p, io, {.now_ns = now + latency[p], .latency_ns = latency[p]});
  return p;
}

// Runs `s` as a closed loop of `outstanding` I/Os over two paths until
// `end_ns`, ticking it every second: each completion submits the next I/O
// `host_ns` later (time outside the paths: a ublk round trip), a read with
// probability `read_share`, else a write, whose latency is
// `latency(path, read, now)`. Returns the I/Os sent at or after `from_ns`,
// [read/write][path].
inline std::array<std::array<int, 2>, 2> ClosedLoopOps(
    Selector& s, int outstanding, double read_share, int64_t from_ns,
    int64_t end_ns, const std::function<int64_t(int, bool, int64_t)>& latency,
    int64_t host_ns = 0) {
  // (completion time, path (-1: back from the host), op, latency).
  using Io = std::tuple<int64_t, int, model::OpGroup, int64_t>;
  std::priority_queue<Io, std::vector<Io>, std::greater<>> out;
  std::array<std::array<int, 2>, 2> sent{};
  int64_t now = 0;
  int next_tick = 1;
  std::mt19937 rng(1);
  std::bernoulli_distribution reads(read_share);
  const auto submit = [&] {
    const bool read = reads(rng);
    const IoRequest io{.op = read ? model::OpGroup::kRead
                                  : model::OpGroup::kWrite};
    const int p = s.Select(io);
    if (p != 0 && p != 1) {
      ADD_FAILURE() << "no path: " << p;
      return;
    }
    s.OnSubmit(p, io, now);
    const int64_t lat = latency(p, read, now);
    out.emplace(now + lat, p, io.op, lat);
    if (now >= from_ns) ++sent[read ? 0 : 1][p];
  };
  for (int i = 0; i < outstanding; ++i) submit();
  while (!out.empty() && now < end_ns) {
    const auto [at, p, op, lat] = out.top();
    out.pop();
    while (next_tick * kSec <= at) s.Tick(next_tick++ * kSec);
    now = at;
    if (p < 0) {
      submit();
      continue;
    }
    s.OnComplete(p, IoRequest{.op = op}, {.now_ns = now, .latency_ns = lat});
    if (host_ns > 0) {
      out.emplace(now + host_ns, -1, model::OpGroup::kRead, 0);
    } else {
      submit();
    }
  }
  return sent;
}

// The same with reads only, `latency(path, now)`: the I/Os sent per path.
inline std::array<int, 2> ClosedLoop(
    Selector& s, int outstanding, int64_t from_ns, int64_t end_ns,
    const std::function<int64_t(int, int64_t)>& latency, int64_t host_ns = 0) {
  return ClosedLoopOps(
      s, outstanding, 1.0, from_ns, end_ns,
      [&](int p, bool, int64_t now) { return latency(p, now); }, host_ns)[0];
}

}  // namespace pathwise::policy

#endif  // PATHWISE_TESTS_UNIT_POLICY_SELECTOR_FIXTURE_H_

// SPDX-License-Identifier: Apache-2.0
// Path selectors: how one multipath head picks a path for each I/O, behind
// one interface, so that `pathwise lab` and a userspace datapath run the same
// code.
//
// The caller owns the paths, the I/O and the clock. It tells the selector
// the head's paths (SetPaths, again whenever one changes), asks it for a path
// per I/O (Select), reports each I/O's submission to a path and its
// completion there (OnSubmit, OnComplete) and, if tick_interval_ns() > 0,
// calls Tick that often. Times are int64 nanoseconds on the caller's
// monotonic clock, always passed in: a selector reads no clock, draws no
// random numbers and does no I/O, so the same calls give the same choices.
//
// A selector is not thread-safe: one head's calls are serialised by the
// caller (the simulator is single-threaded; the datapath shares one per
// head between its queues under a lock, datapath/shared_selector.h).
#ifndef PATHWISE_POLICY_SELECTOR_H_
#define PATHWISE_POLICY_SELECTOR_H_

#include <cstdint>
#include <memory>
#include <span>

#include "policy/policy.h"
#include "scoring/scoring.h"

namespace pathwise::policy {

// Select()'s answer when no path can take I/O: the caller queues the I/O
// until SetPaths reports a usable path again.
inline constexpr int kNoPath = -1;

// One path of the head. Paths are identified by their position in the
// list given to SetPaths (the kernel's list order, which breaks ties).
struct PathInfo {
  // I/O may be sent: the controller is live and the ANA state is optimized
  // or non-optimized (see scoring::IsUsable).
  bool usable = true;
  // ANA optimized. Like the kernel, every policy uses the usable optimized
  // paths if there are any, else the usable non-optimized ones.
  bool optimized = true;
  int numa_node = -1;   // the controller's NUMA node; -1 unknown
  int controller = -1;  // controller instance (nvmeN); -1 unknown
};

// One I/O, as the selector sees it.
struct IoRequest {
  model::OpGroup op = model::OpGroup::kRead;
  int cpu = 0;         // the submitting CPU, >= 0
  int numa_node = 0;   // the submitting CPU's NUMA node; -1 unknown
  uint32_t bytes = 0;  // the I/O's size (no policy uses it yet)
  // The I/Os in flight on the path it was sent to, just before it was sent
  // (the caller sets it from inflight(path) before OnSubmit); -1 unknown.
  int ahead = -1;
};

// How an I/O left a path.
struct Completion {
  int64_t now_ns = 0;
  // From the I/O's submission to this path (OnSubmit) to now.
  int64_t latency_ns = 0;
  // false: the I/O failed on this path (a path error, or the path went away
  // with the I/O in flight) and the caller fails it over. Its latency is
  // not a service time, so no policy learns from it; pathwise counts it as
  // a failover in its scoring window.
  bool ok = true;
};

class Selector {
 public:
  virtual ~Selector() = default;

  virtual Policy policy() const = 0;

  // The head's paths, in list order; called before the first Select and
  // whenever any path changes (state, ANA, or the list itself). Like the
  // kernel's nvme_mpath_revalidate_paths(), it clears cached choices (numa's
  // current path). With the same number of paths, learned state (weights,
  // EWMAs, credits) and in-flight counts are kept; a different number
  // starts learned state afresh and keeps in-flight counts of the paths
  // that remain.
  virtual void SetPaths(std::span<const PathInfo> paths) = 0;

  // The path for `io`, or kNoPath when no path is usable. May advance the
  // policy's state (round-robin's position, latency's credits), as the
  // kernel's selectors do: call it once per I/O about to be submitted.
  virtual int Select(const IoRequest& io) = 0;

  // `io` was submitted to `path` at `now_ns`.
  virtual void OnSubmit(int path, const IoRequest& io, int64_t now_ns) = 0;

  // `io`, submitted to `path`, left it (completed or failed).
  virtual void OnComplete(int path, const IoRequest& io,
                          const Completion& completion) = 0;

  // For window-based policies: Tick(now) is due every tick_interval_ns(),
  // first at one interval after the start; 0: no ticks wanted.
  virtual int64_t tick_interval_ns() const { return 0; }
  virtual void Tick(int64_t /*now_ns*/) {}

  // I/Os submitted to `path` and not yet completed (for tests and views).
  virtual int inflight(int path) const = 0;
};

// Where a selector runs, beside its policy's parameters.
struct SelectorOptions {
  // CPUs that submit I/O (0..cpus-1), to size per-CPU state up front (the
  // latency policy's); an IoRequest from a higher CPU grows it.
  int cpus = 1;
  // The caller's time at the start: window-based policies count their first
  // window from here.
  int64_t start_ns = 0;
};

// A selector for `policy`, with its parameters from `params`. A caller with
// a per-I/O hot loop can take the concrete type instead (VisitSelector in
// policy/selectors.h) and skip the virtual calls.
std::unique_ptr<Selector> MakeSelector(Policy policy,
                                       const PolicyParams& params = {},
                                       const SelectorOptions& options = {});

}  // namespace pathwise::policy

#endif  // PATHWISE_POLICY_SELECTOR_H_

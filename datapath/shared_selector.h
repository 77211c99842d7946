// SPDX-License-Identifier: Apache-2.0
// The path selector of one datapath device, shared by all its queues: one
// policy::Selector (the classes `pathwise lab` runs), so that every choice
// sees the I/O in flight on each path over every ublk queue (queue-depth's
// input, and pathwise's in-flight term and caps), learns from every
// queue's completions, ticks once per window, and the weights and EWMAs the
// exposition shows are the ones in use. The lab simulates one selector per
// head; with one per queue the datapath would drift from its prediction as
// soon as --queues > 1.
//
// Thread-safe: the queue threads' calls and the exposition's View() are
// serialised by a mutex. A queue takes it about once per I/O: the choice
// and the submission are one call (SelectAndSubmit), and its completions
// wait in the queue's own PendingCompletions until its next call or the
// end of its loop turn, then go in under that one lock. The selector thus
// sees a completion before any later choice of the same queue, and other
// queues' choices see it at most one loop turn late (microseconds: the
// turn ends right after its CQEs are handled). Refresh and MaybeTick take
// the lock only when there is something to do.
#ifndef PATHWISE_DATAPATH_SHARED_SELECTOR_H_
#define PATHWISE_DATAPATH_SHARED_SELECTOR_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "datapath/path_state.h"
#include "policy/policy.h"
#include "policy/selector.h"
#include "scoring/scoring.h"

namespace pathwise::datapath {

// What the selector knows about the paths, for the exposition.
struct SelectorView {
  // I/Os out on each path over all queues (the selector's count).
  std::vector<int> inflight;
  // The pathwise policy only (empty otherwise): the scoring library's
  // state as of the last tick (scoring::HeadScorer, its paths keyed by
  // index as text; no paths before the first tick), the weights per op
  // group and path (model::OpGroup order; before the first tick the usable
  // paths share kMaxWeight), each path's base latency (0: none yet) and
  // cap (policy/pathwise_selector.h), and the window length.
  std::optional<scoring::HeadScorer> scorer;
  std::array<std::vector<uint32_t>, model::kOpGroupCount> weights;
  std::vector<uint64_t> base_ns;
  std::vector<int> cap;
  int64_t window_ns = 0;
};

// Completions a queue has seen and not yet given to the selector.
struct PendingCompletion {
  int path = 0;
  policy::IoRequest io;
  policy::Completion completion;
};
using PendingCompletions = std::vector<PendingCompletion>;

class SharedSelector {
 public:
  SharedSelector(policy::Policy policy, const policy::PolicyParams& params,
                 int64_t start_ns);

  // Gives the selector `paths`' current view when it moved since the last
  // call (PathStates::generation); cheap when it did not.
  void Refresh(const PathStates& paths);
  // Ticks the selector when its window is due at `now_ns`, after `pending`
  // (emptied; may be null).
  void MaybeTick(int64_t now_ns, PendingCompletions* pending = nullptr);

  // Under one lock: `pending` (emptied), then the path for `io` and, if
  // there is one, its submission there at `now_ns`, with `io.ahead` set to
  // the I/Os in flight there before it (the caller hands `io` back at its
  // completion). kNoPath: no usable path, nothing submitted.
  int SelectAndSubmit(policy::IoRequest& io, int64_t now_ns,
                      PendingCompletions* pending);
  // Under one lock: `pending` (emptied), then `io`'s submission to `path`
  // (a path the caller chose: a retry on the same path); sets `io.ahead`.
  void Submit(int path, policy::IoRequest& io, int64_t now_ns,
              PendingCompletions* pending);
  // Gives the selector `pending` and empties it; no lock when it is empty.
  void Flush(PendingCompletions* pending);

  // policy::Selector's, under the lock.
  int Select(const policy::IoRequest& io);
  void OnSubmit(int path, const policy::IoRequest& io, int64_t now_ns);
  void OnComplete(int path, const policy::IoRequest& io,
                  const policy::Completion& completion);
  int inflight(int path) const;

  SelectorView View() const;

 private:
  void ApplyLocked(PendingCompletions* pending)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::unique_ptr<policy::Selector> selector_ ABSL_GUARDED_BY(mu_);
  int paths_ ABSL_GUARDED_BY(mu_) = 0;  // as last given (SetPaths)
  const int64_t tick_ns_;
  std::atomic<int64_t> next_tick_ns_;
  std::atomic<uint64_t> generation_{0};
};

}  // namespace pathwise::datapath

#endif  // PATHWISE_DATAPATH_SHARED_SELECTOR_H_

// SPDX-License-Identifier: Apache-2.0
#include "datapath/shared_selector.h"

#include <utility>

#include "policy/pathwise_selector.h"

namespace pathwise::datapath {

SharedSelector::SharedSelector(policy::Policy policy,
                               const policy::PolicyParams& params,
                               int64_t start_ns)
    : selector_(policy::MakeSelector(policy, params,
                                     {.cpus = 1, .start_ns = start_ns})),
      tick_ns_(selector_->tick_interval_ns()),
      next_tick_ns_(tick_ns_ > 0 ? start_ns + tick_ns_ : INT64_MAX) {}

void SharedSelector::Refresh(const PathStates& paths) {
  const uint64_t g = paths.generation();
  if (g == generation_.load(std::memory_order_acquire)) return;
  absl::MutexLock l(&mu_);
  // Read again under the lock: another queue may have given the selector
  // this generation (or a later one) meanwhile.
  const uint64_t now = paths.generation();
  if (now == generation_.load(std::memory_order_relaxed)) return;
  const std::vector<policy::PathInfo> infos = paths.Infos();
  selector_->SetPaths(infos);
  paths_ = static_cast<int>(infos.size());
  generation_.store(now, std::memory_order_release);
}

void SharedSelector::ApplyLocked(PendingCompletions* pending) {
  if (pending == nullptr) return;
  for (const PendingCompletion& c : *pending) {
    selector_->OnComplete(c.path, c.io, c.completion);
  }
  pending->clear();
}

void SharedSelector::MaybeTick(int64_t now_ns, PendingCompletions* pending) {
  if (now_ns < next_tick_ns_.load(std::memory_order_relaxed)) return;
  absl::MutexLock l(&mu_);
  // This queue's completions belong to the window that ends now.
  ApplyLocked(pending);
  const int64_t due = next_tick_ns_.load(std::memory_order_relaxed);
  if (now_ns < due) return;  // another queue ticked it
  selector_->Tick(now_ns);
  next_tick_ns_.store(now_ns + tick_ns_, std::memory_order_relaxed);
}

int SharedSelector::SelectAndSubmit(policy::IoRequest& io, int64_t now_ns,
                                    PendingCompletions* pending) {
  absl::MutexLock l(&mu_);
  ApplyLocked(pending);
  const int path = selector_->Select(io);
  if (path != policy::kNoPath) {
    io.ahead = selector_->inflight(path);
    selector_->OnSubmit(path, io, now_ns);
  }
  return path;
}

void SharedSelector::Submit(int path, policy::IoRequest& io, int64_t now_ns,
                            PendingCompletions* pending) {
  absl::MutexLock l(&mu_);
  ApplyLocked(pending);
  io.ahead = selector_->inflight(path);
  selector_->OnSubmit(path, io, now_ns);
}

void SharedSelector::Flush(PendingCompletions* pending) {
  if (pending == nullptr || pending->empty()) return;
  absl::MutexLock l(&mu_);
  ApplyLocked(pending);
}

int SharedSelector::Select(const policy::IoRequest& io) {
  absl::MutexLock l(&mu_);
  return selector_->Select(io);
}

void SharedSelector::OnSubmit(int path, const policy::IoRequest& io,
                              int64_t now_ns) {
  absl::MutexLock l(&mu_);
  selector_->OnSubmit(path, io, now_ns);
}

void SharedSelector::OnComplete(int path, const policy::IoRequest& io,
                                const policy::Completion& completion) {
  absl::MutexLock l(&mu_);
  selector_->OnComplete(path, io, completion);
}

int SharedSelector::inflight(int path) const {
  absl::MutexLock l(&mu_);
  return selector_->inflight(path);
}

SelectorView SharedSelector::View() const {
  SelectorView v;
  absl::MutexLock l(&mu_);
  for (int i = 0; i < paths_; ++i) v.inflight.push_back(selector_->inflight(i));
  const auto* p =
      dynamic_cast<const policy::PathwiseSelector*>(selector_.get());
  if (p == nullptr) return v;
  v.scorer = p->scorer();
  for (model::OpGroup g : model::kAllOpGroups) {
    for (int i = 0; i < paths_; ++i) {
      v.weights[model::Index(g)].push_back(p->weight(g, i));
    }
  }
  for (int i = 0; i < paths_; ++i) {
    v.base_ns.push_back(p->base(i));
    v.cap.push_back(p->cap(i));
  }
  v.window_ns = tick_ns_;
  return v;
}

}  // namespace pathwise::datapath

// SPDX-License-Identifier: Apache-2.0
#include "lab/event_queue.h"

#include <algorithm>

namespace pathwise::lab {
namespace {

// The nodes live at h_ = a 64-byte aligned block + 3 nodes, so that the
// children of node i, 4i+1..4i+4, share one cache line.
constexpr std::align_val_t kAlign{64};

}  // namespace

void EventQueue::Renumber() {
  std::sort(h_, h_ + n_, Less);  // sorted: still a heap
  for (uint32_t k = 0; k < n_; ++k) {
    Ev& e = h_[k];
    const uint32_t old = e.seq();
    e.w = static_cast<uint64_t>(k) << 32 | (e.w & 0xffffffffu);
    if (renumber_hook_) renumber_hook_(e, old, k);
  }
  seq_ = static_cast<uint32_t>(n_);
}

void EventQueue::Grow() {
  const size_t cap = cap_ == 0 ? 1024 : cap_ * 2;
  Ev* base = static_cast<Ev*>(::operator new((cap + 3) * sizeof(Ev), kAlign));
  if (n_ > 0) std::copy(h_, h_ + n_, base + 3);
  Free();
  h_ = base + 3;
  cap_ = cap;
}

void EventQueue::Free() {
  if (h_ != nullptr) ::operator delete(h_ - 3, kAlign);
  h_ = nullptr;
}

}  // namespace pathwise::lab

// SPDX-License-Identifier: Apache-2.0
// The simulator's event queue: a 4-ary min-heap ordered by (time, insertion
// sequence), so simultaneous events pop in insertion order and a run is
// reproducible.
#ifndef PATHWISE_LAB_EVENT_QUEUE_H_
#define PATHWISE_LAB_EVENT_QUEUE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <new>
#include <utility>

#include "absl/base/attributes.h"

namespace pathwise::lab {

enum class EvKind : uint8_t { kComplete, kScript, kTick, kSubmit };

// 16-byte nodes: the second word packs the sequence (high 32 bits), the kind
// (2 bits) and the id (30 bits), so comparing the two words compares
// (t, seq). A 4-ary heap of 16-byte nodes keeps a node's children in one
// cache line and is half as deep as a binary heap; pops move the hole to a
// leaf first (Floyd), which saves a comparison per level.
class EventQueue {
 public:
  static constexpr uint32_t kMaxId = (1u << 30) - 1;

  struct Ev {
    int64_t t;
    uint64_t w;  // seq << 32 | kind << 30 | id
    uint32_t seq() const { return static_cast<uint32_t>(w >> 32); }
    EvKind kind() const { return static_cast<EvKind>((w >> 30) & 3); }
    uint32_t id() const { return static_cast<uint32_t>(w) & kMaxId; }
  };

  EventQueue() = default;
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;
  ~EventQueue() { Free(); }

  bool empty() const { return n_ == 0; }
  const Ev& top() const { return h_[0]; }

  // Returns the event's sequence number.
  ABSL_ATTRIBUTE_ALWAYS_INLINE uint32_t Push(int64_t t, uint32_t id,
                                             EvKind kind) {
    if (seq_ == UINT32_MAX) Renumber();
    const uint32_t seq = seq_++;
    const Ev e{t, static_cast<uint64_t>(seq) << 32 |
                      static_cast<uint64_t>(kind) << 30 | id};
    if (n_ == cap_) Grow();
    size_t i = n_++;
    while (i > 0) {
      const size_t parent = (i - 1) / 4;
      if (!Less(e, h_[parent])) break;
      h_[i] = h_[parent];
      i = parent;
    }
    h_[i] = e;
    return seq;
  }

  Ev Pop() {
    const Ev top = h_[0];
    const Ev last = h_[--n_];
    const size_t n = n_;
    if (n == 0) return top;
    size_t i = 0;
    for (;;) {
      const size_t c = 4 * i + 1;
      if (c >= n) break;
      size_t m;
      if (c + 4 <= n) {  // branch-free: the comparisons are unpredictable
        const size_t a = c + Less(h_[c + 1], h_[c]);
        const size_t b = c + 2 + Less(h_[c + 3], h_[c + 2]);
        m = Less(h_[b], h_[a]) ? b : a;
      } else {
        m = c;
        for (size_t k = c + 1; k < n; ++k) {
          if (Less(h_[k], h_[m])) m = k;
        }
      }
      h_[i] = h_[m];
      i = m;
    }
    while (i > 0) {
      const size_t parent = (i - 1) / 4;
      if (!Less(last, h_[parent])) break;
      h_[i] = h_[parent];
      i = parent;
    }
    h_[i] = last;
    return top;
  }

  // Called when the sequence would wrap (after 2^32 events): renumbers the
  // queued events 0..n-1 in their order, which keeps every comparison, and
  // tells the caller each event's old and new number.
  template <typename F>
  void SetRenumberHook(F&& f) {
    renumber_hook_ = std::forward<F>(f);
  }

 private:
  static bool Less(const Ev& a, const Ev& b) {
    // (t, w) as one 128-bit number: a compare and a subtract-with-borrow.
    using u128 = unsigned __int128;
    return (static_cast<u128>(static_cast<uint64_t>(a.t)) << 64 | a.w) <
           (static_cast<u128>(static_cast<uint64_t>(b.t)) << 64 | b.w);
  }
  void Renumber();
  void Grow();
  void Free();

  Ev* h_ = nullptr;
  size_t n_ = 0, cap_ = 0;
  uint32_t seq_ = 0;
  std::function<void(const Ev&, uint32_t, uint32_t)> renumber_hook_;
};

}  // namespace pathwise::lab

#endif  // PATHWISE_LAB_EVENT_QUEUE_H_

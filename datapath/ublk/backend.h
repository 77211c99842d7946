// SPDX-License-Identifier: Apache-2.0
// The interface between the ublk front end and whatever serves its I/O.
//
// The front end runs one thread and one io_uring per ublk queue. For each
// queue it asks the Backend for a QueueBackend, created on that queue's
// thread, and hands it the queue's QueueContext. All calls on a QueueBackend
// and on its QueueContext (except Wake) happen on that one thread, so a
// backend needs no locks for per-queue state.
//
// Completions reach the queue thread in one of two ways:
//   - the backend shares the queue's ring: it takes SQEs from
//     QueueContext::GetSqe(), tags them with BackendUserData(cookie), and the
//     queue passes their CQEs back to QueueBackend::OnCqe. An io_uring NVMe
//     passthru backend does this (Backend::ring_needs() asks for SQE128 and
//     CQE32), and so does the file backend: one io_uring_enter submits the
//     ublk commits and the backend's I/O together.
//   - the backend completes elsewhere (another thread, another ring): it
//     calls QueueContext::Wake() from there, and the queue thread then calls
//     QueueBackend::Poll(), where the backend calls Complete().
#ifndef PATHWISE_DATAPATH_UBLK_BACKEND_H_
#define PATHWISE_DATAPATH_UBLK_BACKEND_H_

#include <liburing.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "absl/status/statusor.h"

namespace pathwise::datapath::ublk {

enum class IoOp : uint8_t { kRead, kWrite, kFlush, kDiscard, kWriteZeroes };

const char* IoOpName(IoOp op);

// One block request. offset and length are in bytes (multiples of the
// logical block size); buffer is the request's data (length bytes) for
// kRead and kWrite and empty otherwise. For kWrite it holds the data to
// write; for kRead the backend fills it. The buffer stays valid until the
// request is completed or cancelled, and longer (see QueueBackend::Cancel).
struct IoRequest {
  uint16_t tag = 0;
  IoOp op = IoOp::kRead;
  // Write through: the data is durable when the request completes.
  bool fua = false;
  // kWriteZeroes: deallocating the range is not allowed.
  bool no_unmap = false;
  uint64_t offset = 0;
  uint32_t length = 0;
  std::span<std::byte> buffer;
};

// What the queue offers its backend. Queue-thread only, except Wake().
class QueueContext {
 public:
  // CQEs whose user_data has this bit set belong to the backend; the rest
  // of the 64 bits are the backend's cookie.
  static constexpr uint64_t kBackendBit = uint64_t{1} << 63;
  static constexpr uint64_t BackendUserData(uint64_t cookie) {
    return kBackendBit | cookie;
  }

  virtual ~QueueContext() = default;
  virtual int queue_id() const = 0;
  // Tags are 0..depth()-1.
  virtual uint16_t depth() const = 0;
  // A zeroed SQE on the queue's ring (the whole 128 bytes on an SQE128
  // ring), submitted with the queue's next batch. Submits first when the SQ
  // is full; null only if the ring is broken.
  virtual io_uring_sqe* GetSqe() = 0;
  virtual io_uring* ring() = 0;
  // Finishes request `tag`: result >= 0 is success (bytes transferred for
  // kRead and kWrite, which must equal the request's length; 0 for the
  // rest), < 0 is -errno (-EIO, -ENOSPC, -EOPNOTSUPP...). Exactly once per
  // request that was not cancelled.
  virtual void Complete(uint16_t tag, int32_t result) = 0;
  // Thread-safe: makes the queue thread call QueueBackend::Poll() soon.
  virtual void Wake() = 0;
  // The index of the ring's registered buffer that holds [data, data +
  // bytes), or -1 (buffers not registered, or a buffer given to a tag after
  // a cancel). With an index the backend may use the buffer as fixed
  // (IORING_URING_CMD_FIXED, READ_FIXED...): the kernel then maps no pages
  // per I/O.
  virtual int FixedBuffer(const std::byte* /*data*/, size_t /*bytes*/) const {
    return -1;
  }
};

// A backend's per-queue half. Lives and dies on its queue thread.
class QueueBackend {
 public:
  virtual ~QueueBackend() = default;
  // Starts a request; completes later (or inline) through Complete().
  virtual void Submit(const IoRequest& request) = 0;
  // A CQE of this backend's from the shared ring.
  virtual void OnCqe(const io_uring_cqe& cqe) = 0;
  // After Wake(), and once per loop turn while requests are outstanding.
  virtual void Poll() {}
  // Once per loop turn, after the turn's CQEs (and Poll): work the backend
  // batched over the turn is done here at the latest (the NVMe backend
  // hands the turn's completions to its shared selector under one lock).
  virtual void EndTurn() {}
  // The front end gave up on `tag` (shutdown grace expired) and failed it
  // with -EIO itself: the backend must not Complete() that request, and
  // should stop it if it can. Its buffer stays mapped until the queue is
  // destroyed, so a late transfer into it is harmless.
  virtual void Cancel(uint16_t tag) = 0;
};

struct Geometry {
  uint64_t size_bytes = 0;
  // log2 of the logical and physical block sizes (9..12).
  uint8_t logical_block_shift = 9;
  uint8_t physical_block_shift = 12;
  // Flush is needed for durability (advertised as a volatile write cache).
  bool volatile_cache = false;
  bool fua = false;
  bool discard = false;
  bool write_zeroes = false;
  // The largest discard and write-zeroes request, in bytes; 0: no limit of
  // the backend's (the block layer splits larger ones).
  uint64_t max_discard_bytes = 0;
  uint64_t max_write_zeroes_bytes = 0;
};

struct RingNeeds {
  bool sqe128 = false;
  bool cqe32 = false;
  // SQ entries the backend may use per request in flight.
  unsigned sqes_per_request = 1;
  // Register the tags' buffers with the ring (pinned for the queue's life:
  // depth x the largest request) so that FixedBuffer() answers.
  bool fixed_buffers = false;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual Geometry geometry() const = 0;
  virtual RingNeeds ring_needs() const { return {}; }
  // Called on the queue thread, after the ring exists and before any
  // request of that queue.
  virtual absl::StatusOr<std::unique_ptr<QueueBackend>> AttachQueue(
      QueueContext& context) = 0;
};

}  // namespace pathwise::datapath::ublk

#endif  // PATHWISE_DATAPATH_UBLK_BACKEND_H_

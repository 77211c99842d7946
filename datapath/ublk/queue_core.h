// SPDX-License-Identifier: Apache-2.0
// The per-queue state machine of the ublk front end, without io_uring: which
// tags the kernel holds, which the backend holds, which are gone, and what
// shutdown does with requests the backend never finishes. The io_uring queue
// (queue.h) feeds it CQEs and carries out its commands; the unit tests feed
// it by hand.
//
// Tag states:
//   kIdle      before Start()
//   kInKernel  a FETCH or COMMIT_AND_FETCH is with the kernel, waiting for
//              the next request on this tag
//   kInBackend the backend holds the request
//   kDead      the kernel aborted the command (device stopping) or refused
//              it; the tag serves nothing more
#ifndef PATHWISE_DATAPATH_UBLK_QUEUE_CORE_H_
#define PATHWISE_DATAPATH_UBLK_QUEUE_CORE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "absl/time/time.h"
#include "datapath/ublk/backend.h"
#include "datapath/ublk/uapi.h"

namespace pathwise::datapath::ublk {

// Where the core's commands to the kernel go.
class CommandSink {
 public:
  virtual ~CommandSink() = default;
  virtual void Fetch(uint16_t tag, std::byte* buffer) = 0;
  virtual void Commit(uint16_t tag, int32_t result, std::byte* buffer) = 0;
};

struct QueueCounters {
  uint64_t requests = 0;
  uint64_t completed = 0;
  // Completed with a negative result (including rejected descriptors).
  uint64_t failed = 0;
  // Rejected before reaching the backend (bad descriptor, after the grace).
  uint64_t rejected = 0;
  // Given up at shutdown: cancelled in the backend, failed with EIO.
  uint64_t abandoned = 0;
  // Complete() for a tag the backend does not hold (a backend bug).
  uint64_t stray_completions = 0;
  // FETCH/COMMIT refused by the kernel (not ABORT).
  uint64_t command_errors = 0;
};

class QueueCore {
 public:
  enum class TagState : uint8_t { kIdle, kInKernel, kInBackend, kDead };

  // buffers: one per tag, buffer_bytes each. new_buffer: a fresh buffer for
  // a tag whose old one a cancelled backend request may still be using.
  QueueCore(uint16_t depth, uint32_t buffer_bytes, const Geometry& geometry,
            CommandSink& sink, std::vector<std::byte*> buffers,
            std::function<std::byte*()> new_buffer);

  void set_backend(QueueBackend* backend) { backend_ = backend; }

  // FETCH on every tag.
  void Start();
  // The CQE of tag's FETCH/COMMIT_AND_FETCH with its result; iod is the
  // tag's descriptor (read only when result is UBLK_IO_RES_OK).
  void OnCommandDone(uint16_t tag, int32_t result, const ublksrv_io_desc& iod);
  // The backend finished tag's request.
  void Complete(uint16_t tag, int32_t result);
  // Shutdown starts: requests keep being served until `now + grace`; after
  // that, Tick() abandons what the backend still holds and new requests
  // fail at once.
  void BeginStop(absl::Time now, absl::Duration grace);
  void Tick(absl::Time now);

  bool stopping() const { return stopping_; }
  // Every tag is dead: the kernel has nothing more for this queue.
  bool Finished() const { return dead_ == depth_; }
  int in_backend() const { return in_backend_; }
  TagState state(uint16_t tag) const { return tags_[tag].state; }
  std::byte* buffer(uint16_t tag) const { return tags_[tag].buffer; }
  const QueueCounters& counters() const { return counters_; }

 private:
  struct Tag {
    TagState state = TagState::kIdle;
    IoOp op = IoOp::kRead;
    uint32_t length = 0;
    std::byte* buffer = nullptr;
  };

  void CommitTag(uint16_t tag, int32_t result);
  void MarkDead(uint16_t tag);

  const uint16_t depth_;
  const uint32_t buffer_bytes_;
  const Geometry geometry_;
  CommandSink& sink_;
  std::function<std::byte*()> new_buffer_;
  QueueBackend* backend_ = nullptr;
  std::vector<Tag> tags_;
  int in_backend_ = 0;
  int dead_ = 0;
  bool stopping_ = false;
  bool grace_over_ = false;
  absl::Time grace_end_ = absl::InfiniteFuture();
  QueueCounters counters_;
};

}  // namespace pathwise::datapath::ublk

#endif  // PATHWISE_DATAPATH_UBLK_QUEUE_CORE_H_

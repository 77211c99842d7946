// SPDX-License-Identifier: Apache-2.0
#include "datapath/ublk/queue_core.h"

#include <cerrno>
#include <utility>

#include "datapath/ublk/params.h"

namespace pathwise::datapath::ublk {

QueueCore::QueueCore(uint16_t depth, uint32_t buffer_bytes,
                     const Geometry& geometry, CommandSink& sink,
                     std::vector<std::byte*> buffers,
                     std::function<std::byte*()> new_buffer)
    : depth_(depth),
      buffer_bytes_(buffer_bytes),
      geometry_(geometry),
      sink_(sink),
      new_buffer_(std::move(new_buffer)),
      tags_(depth) {
  for (uint16_t t = 0; t < depth_ && t < buffers.size(); ++t) {
    tags_[t].buffer = buffers[t];
  }
}

void QueueCore::Start() {
  for (uint16_t t = 0; t < depth_; ++t) {
    tags_[t].state = TagState::kInKernel;
    sink_.Fetch(t, tags_[t].buffer);
  }
}

void QueueCore::MarkDead(uint16_t tag) {
  if (tags_[tag].state == TagState::kDead) return;
  if (tags_[tag].state == TagState::kInBackend) --in_backend_;
  tags_[tag].state = TagState::kDead;
  ++dead_;
}

void QueueCore::CommitTag(uint16_t tag, int32_t result) {
  Tag& t = tags_[tag];
  t.state = TagState::kInKernel;
  ++counters_.completed;
  if (result < 0) ++counters_.failed;
  sink_.Commit(tag, result, t.buffer);
}

void QueueCore::OnCommandDone(uint16_t tag, int32_t result,
                              const ublksrv_io_desc& iod) {
  if (tag >= depth_) {
    ++counters_.command_errors;
    return;
  }
  Tag& t = tags_[tag];
  if (t.state != TagState::kInKernel) {
    // The kernel answered a command we did not send: nothing safe to do
    // with this tag but to stop using it.
    ++counters_.command_errors;
    MarkDead(tag);
    return;
  }
  if (result == UBLK_IO_RES_ABORT) {
    MarkDead(tag);
    return;
  }
  if (result != UBLK_IO_RES_OK) {
    // A refused FETCH/COMMIT (-EINVAL, -EBUSY) or NEED_GET_DATA, which we
    // never ask for.
    ++counters_.command_errors;
    MarkDead(tag);
    return;
  }
  ++counters_.requests;
  IoRequest request;
  const int err =
      DecodeIod(iod, tag, geometry_,
                std::span<std::byte>(t.buffer, buffer_bytes_), &request);
  if (err != 0 || grace_over_ || backend_ == nullptr) {
    ++counters_.rejected;
    CommitTag(tag, err != 0 ? err : -EIO);
    return;
  }
  t.state = TagState::kInBackend;
  t.op = request.op;
  t.length = request.length;
  ++in_backend_;
  backend_->Submit(request);
}

void QueueCore::Complete(uint16_t tag, int32_t result) {
  if (tag >= depth_ || tags_[tag].state != TagState::kInBackend) {
    ++counters_.stray_completions;
    return;
  }
  Tag& t = tags_[tag];
  --in_backend_;
  if ((t.op == IoOp::kRead || t.op == IoOp::kWrite) && result > 0 &&
      static_cast<uint32_t>(result) > t.length) {
    result = static_cast<int32_t>(t.length);
  }
  if (t.op != IoOp::kRead && t.op != IoOp::kWrite && result > 0) result = 0;
  CommitTag(tag, result);
}

void QueueCore::BeginStop(absl::Time now, absl::Duration grace) {
  if (stopping_) return;
  stopping_ = true;
  grace_end_ = now + grace;
  Tick(now);
}

void QueueCore::Tick(absl::Time now) {
  if (!stopping_ || now < grace_end_) return;
  grace_over_ = true;
  for (uint16_t tag = 0; tag < depth_; ++tag) {
    Tag& t = tags_[tag];
    if (t.state != TagState::kInBackend) continue;
    if (backend_ != nullptr) backend_->Cancel(tag);
    --in_backend_;
    ++counters_.abandoned;
    // The backend may still transfer into the old buffer; the kernel gets
    // a fresh one for whatever this tag serves next.
    if (new_buffer_) {
      if (std::byte* fresh = new_buffer_(); fresh != nullptr) {
        t.buffer = fresh;
      }
    }
    CommitTag(tag, -EIO);
  }
}

}  // namespace pathwise::datapath::ublk

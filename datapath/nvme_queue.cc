// SPDX-License-Identifier: Apache-2.0
#include "datapath/nvme_queue.h"

#include <linux/nvme_ioctl.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace pathwise::datapath {
namespace {

// How often the timer runs while anything is out, waiting or failed, and
// how often Poll() does the same work between timer turns.
constexpr int64_t kTimerNs = 100'000'000;
constexpr int64_t kServiceNs = 50'000'000;

constexpr uint64_t kKindShift = 60;
constexpr uint64_t kGenerationMask = (uint64_t{1} << 44) - 1;

}  // namespace

uint64_t NvmeQueue::Cookie(Kind kind, uint64_t generation, uint16_t index) {
  return (static_cast<uint64_t>(kind) << kKindShift) |
         ((generation & kGenerationMask) << 16) | index;
}

NvmeQueue::NvmeQueue(NvmeBackend& backend, ublk::QueueContext& context)
    : backend_(backend),
      context_(context),
      options_(backend.options()),
      lba_shift_(backend.geometry().logical_block_shift),
      selector_(backend.selector()),
      slots_(context.depth()) {
  const int n = backend_.paths().size();
  stats_.paths.resize(static_cast<size_t>(n));
  const size_t lba = size_t{1} << lba_shift_;
  for (int p = 0; p < n; ++p) {
    void* b = mmap(nullptr, lba, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    probe_buffers_.push_back(b == MAP_FAILED ? nullptr
                                             : static_cast<std::byte*>(b));
  }
  probing_.assign(static_cast<size_t>(n), false);
  pending_.reserve(slots_.size());
  RefreshPaths();
}

NvmeQueue::~NvmeQueue() {
  selector_.Flush(&pending_);
  backend_.Publish(context_.queue_id(), stats_);
  // A probe still out keeps its buffer: the kernel pins the pages.
  for (std::byte* b : probe_buffers_) {
    if (b != nullptr) munmap(b, size_t{1} << lba_shift_);
  }
}

policy::IoRequest NvmeQueue::SelectorIo(const Slot& s) {
  const ublk::IoRequest& r = s.request;
  policy::IoRequest io;
  io.op = r.op == ublk::IoOp::kRead    ? model::OpGroup::kRead
          : r.op == ublk::IoOp::kWrite ? model::OpGroup::kWrite
                                       : model::OpGroup::kOther;
  io.bytes = r.length;
  io.ahead = s.ahead;
  return io;
}

void NvmeQueue::RefreshPaths() { selector_.Refresh(backend_.paths()); }

void NvmeQueue::Submit(const ublk::IoRequest& request) {
  Slot& s = slots_.at(request.tag);
  s.request = request;
  s.active = true;
  s.waiting = false;
  s.timed_out = false;
  s.delayed = false;
  s.fail_with = 0;
  s.path = -1;
  s.attempts = 0;
  s.wait_deadline_ns = 0;
  const int64_t now = backend_.Now();
  selector_.MaybeTick(now, &pending_);
  Dispatch(request.tag, now);
  ArmTimer();
}

void NvmeQueue::EndTurn() { selector_.Flush(&pending_); }

void NvmeQueue::Dispatch(uint16_t tag, int64_t now, int prefer) {
  Slot& s = slots_[tag];
  if (!s.active || s.path >= 0) return;
  RefreshPaths();
  // The choice and the submission to the selector in one lock round trip
  // (the turn's completions so far go in first).
  policy::IoRequest io = SelectorIo(s);
  int path = policy::kNoPath;
  if (prefer >= 0 && backend_.paths().Get(prefer).usable()) {
    path = prefer;
    selector_.Submit(path, io, now, &pending_);
  } else {
    path = selector_.SelectAndSubmit(io, now, &pending_);
  }
  s.ahead = io.ahead;
  if (path == policy::kNoPath) {
    if (!s.waiting) {
      s.waiting = true;
      if (s.wait_deadline_ns == 0) {
        s.wait_deadline_ns =
            now + absl::ToInt64Nanoseconds(options_.no_path_timeout);
        ++stats_.no_path_waits;
      }
      waiting_.push_back(tag);
    }
    ArmTimer();
    return;
  }
  s.waiting = false;
  if (!Issue(tag, path, now)) {
    // No SQE (a broken ring): the selector takes the submission back.
    pending_.push_back(
        {.path = path,
         .io = io,
         .completion = {.now_ns = now, .latency_ns = 0, .ok = false}});
    Finish(tag, -EIO);
  }
}

bool NvmeQueue::Issue(uint16_t tag, int path, int64_t now) {
  Slot& s = slots_[tag];
  const ublk::IoRequest& r = s.request;
  const uint32_t nsid = backend_.nsid(path);
  const uint64_t slba = r.offset >> lba_shift_;
  const uint32_t blocks = r.length >> lba_shift_;
  nvme_uring_cmd cmd;
  switch (r.op) {
    case ublk::IoOp::kRead:
      cmd = nvme::ReadCommand(nsid, slba, blocks, r.buffer.data(), r.length);
      break;
    case ublk::IoOp::kWrite:
      cmd = nvme::WriteCommand(nsid, slba, blocks, r.buffer.data(), r.length,
                               r.fua);
      break;
    case ublk::IoOp::kFlush:
      cmd = nvme::FlushCommand(nsid);
      break;
    case ublk::IoOp::kWriteZeroes:
      cmd = nvme::WriteZeroesCommand(nsid, slba, blocks, !r.no_unmap);
      break;
    case ublk::IoOp::kDiscard:
      s.range = nvme::DsmRange{.blocks = blocks, .slba = slba};
      cmd = nvme::DeallocateCommand(nsid, &s.range, 1);
      break;
  }
  io_uring_sqe* sqe = context_.GetSqe();
  if (sqe == nullptr) return false;
  sqe->opcode = IORING_OP_URING_CMD;
  sqe->fd = path;  // the registered file index
  sqe->flags = IOSQE_FIXED_FILE;
  sqe->cmd_op = NVME_URING_CMD_IO;
  std::memcpy(sqe->cmd, &cmd, sizeof(cmd));
  if (r.op == ublk::IoOp::kRead || r.op == ublk::IoOp::kWrite) {
    const int fixed = context_.FixedBuffer(r.buffer.data(), r.length);
    if (fixed >= 0) {
      sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
      sqe->buf_index = static_cast<uint16_t>(fixed);
    }
  }
  sqe->user_data =
      ublk::QueueContext::BackendUserData(Cookie(Kind::kIo, s.generation, tag));
  s.path = path;
  s.submit_ns = now;
  ++in_flight_;
  ++stats_.paths[path].selections;
  if (options_.defect == SeededDefect::kAckBeforeCompletion &&
      r.op == ublk::IoOp::kWrite) {
    AbandonCommand(tag, now);
    Finish(tag, static_cast<int32_t>(r.length));
  }
  return true;
}

// Its CQE, when it comes, matches nothing; the selector takes the
// submission back as a failed completion.
void NvmeQueue::AbandonCommand(uint16_t tag, int64_t now) {
  Slot& s = slots_[tag];
  pending_.push_back(
      {.path = s.path,
       .io = SelectorIo(s),
       .completion = {.now_ns = now, .latency_ns = 0, .ok = false}});
  --in_flight_;
  s.path = -1;
  ++s.generation;
}

bool NvmeQueue::WritesData(ublk::IoOp op) {
  return op == ublk::IoOp::kWrite || op == ublk::IoOp::kWriteZeroes ||
         op == ublk::IoOp::kDiscard;
}

void NvmeQueue::Finish(uint16_t tag, int32_t result) {
  Slot& s = slots_[tag];
  s.active = false;
  s.waiting = false;
  ++s.generation;
  ++stats_.requests;
  if (result < 0) ++stats_.failed_requests;
  context_.Complete(tag, result);
}

void NvmeQueue::OnCqe(const io_uring_cqe& cqe) {
  const uint64_t cookie = cqe.user_data & ~ublk::QueueContext::kBackendBit;
  const auto kind = static_cast<Kind>((cookie >> kKindShift) & 3);
  const auto index = static_cast<uint16_t>(cookie & 0xffff);
  switch (kind) {
    case Kind::kIo:
      OnIoCqe(index, (cookie >> 16) & kGenerationMask, cqe.res);
      break;
    case Kind::kProbe:
      OnProbeCqe(index, cqe.res);
      break;
    case Kind::kTimer:
      timer_armed_ = false;
      Service(backend_.Now());
      break;
  }
}

void NvmeQueue::OnIoCqe(uint16_t tag, uint64_t generation, int32_t res) {
  if (tag >= slots_.size()) return;
  Slot& s = slots_[tag];
  if (!s.active || (s.generation & kGenerationMask) != generation ||
      s.path < 0) {
    return;  // cancelled at shutdown
  }
  const int path = s.path;
  s.path = -1;
  --in_flight_;
  const int64_t now = backend_.Now();
  const int64_t latency = now - s.submit_ns;
  const ublk::IoRequest& r = s.request;
  const bool data = r.op == ublk::IoOp::kRead || r.op == ublk::IoOp::kWrite;
  const Disposition d =
      DecideCompletion(res, data ? static_cast<int32_t>(r.length) : 0);
  PathStats& ps = stats_.paths[path];
  const policy::IoRequest io = SelectorIo(s);
  if (d.kind == Disposition::Kind::kComplete) {
    pending_.push_back(
        {.path = path,
         .io = io,
         .completion = {.now_ns = now, .latency_ns = latency, .ok = true}});
    ++ps.ios;
    if (data) ps.bytes += r.length;
    ps.latency.Observe(static_cast<uint64_t>(std::max<int64_t>(latency, 0)));
    ps.RecordOp(ModelOpOf(r.op), data ? r.length : 0, latency);
    Finish(tag, d.result);
    return;
  }
  pending_.push_back(
      {.path = path,
       .io = io,
       .completion = {.now_ns = now, .latency_ns = latency, .ok = false}});
  ++ps.errors;
  if (res < 0) {
    ++ps.transport_errors;
  } else {
    ++ps.errors_by_class[model::ErrorClassIndex(d.status_class)];
  }
  int prefer = -1;
  switch (d.kind) {
    case Disposition::Kind::kComplete:
    case Disposition::Kind::kFail:
      Finish(tag, d.result);
      return;
    case Disposition::Kind::kFailover:
      // Either takes the path out of use before the I/O is dispatched again.
      if (d.path_failed) backend_.paths().OnFailure(path, now);
      if (d.ana_error) backend_.paths().OnAnaError(path, now);
      ++ps.failovers;
      break;
    case Disposition::Kind::kRetry:
      prefer = path;
      break;
  }
  // A write the failed path may still execute waits out the write fence
  // (failover.h) before anything else happens to it.
  const int64_t fence = CutOffByPathFailure(d) && WritesData(r.op)
                            ? backend_.WriteFenceNs(path)
                            : 0;
  if (fence > 0) ++ps.fenced_writes;
  if (++s.attempts >= options_.retry.max_attempts) {
    // Out of attempts: failed, but not before the fence. Told at once,
    // the client could write the blocks again, through another path or
    // this one, and the cut-off write landing late would overwrite that
    // acknowledged write.
    if (fence > 0) {
      s.delayed = true;
      s.fail_with = d.result < 0 ? d.result : -EIO;
      s.retry_at_ns = now + fence;
      delayed_.push_back(tag);
      ArmTimer();
      return;
    }
    Finish(tag, d.result);
    return;
  }
  // The controller asked for a pause before the command comes again
  // (CRD): the request waits it out, then goes where the rules above say.
  const int64_t delay = std::max(backend_.RetryDelayNs(path, d.crd), fence);
  if (delay > 0) {
    s.delayed = true;
    s.retry_prefer = prefer;
    s.retry_at_ns = now + delay;
    delayed_.push_back(tag);
    ArmTimer();
    return;
  }
  Dispatch(tag, now, prefer);
}

void NvmeQueue::ServiceDelayed(int64_t now) {
  std::deque<uint16_t> delayed;
  delayed.swap(delayed_);
  for (const uint16_t tag : delayed) {
    Slot& s = slots_[tag];
    if (!s.active || !s.delayed) continue;
    if (now < s.retry_at_ns) {
      delayed_.push_back(tag);
      continue;
    }
    s.delayed = false;
    if (s.fail_with != 0) {
      Finish(tag, s.fail_with);
      continue;
    }
    Dispatch(tag, now, s.retry_prefer);
  }
}

void NvmeQueue::OnProbeCqe(int path, int32_t res) {
  if (path < 0 || path >= static_cast<int>(probing_.size())) return;
  probing_[path] = false;
  const bool ok = DecideCompletion(res, 0).kind == Disposition::Kind::kComplete;
  if (!ok) ++stats_.paths[path].probe_failures;
  backend_.paths().OnProbeResult(path, ok, backend_.Now());
}

void NvmeQueue::StartProbes(int64_t now) {
  PathStates& paths = backend_.paths();
  if (!paths.AnyFailed()) return;
  for (int p = 0; p < paths.size(); ++p) {
    if (probing_[p] || probe_buffers_[p] == nullptr) continue;
    if (!paths.ClaimProbe(p, now)) continue;
    io_uring_sqe* sqe = context_.GetSqe();
    if (sqe == nullptr) {
      paths.OnProbeResult(p, false, now);
      continue;
    }
    const nvme_uring_cmd cmd = nvme::ReadCommand(
        backend_.nsid(p), 0, 1, probe_buffers_[p], uint32_t{1} << lba_shift_);
    sqe->opcode = IORING_OP_URING_CMD;
    sqe->fd = p;
    sqe->flags = IOSQE_FIXED_FILE;
    sqe->cmd_op = NVME_URING_CMD_IO;
    std::memcpy(sqe->cmd, &cmd, sizeof(cmd));
    sqe->user_data = ublk::QueueContext::BackendUserData(
        Cookie(Kind::kProbe, 0, static_cast<uint16_t>(p)));
    probing_[p] = true;
    ++stats_.paths[p].probes;
  }
}

void NvmeQueue::Service(int64_t now) {
  next_service_ns_ = now + kServiceNs;
  RefreshPaths();
  selector_.MaybeTick(now, &pending_);
  if (in_flight_ > 0) {
    const int64_t limit = absl::ToInt64Nanoseconds(options_.io_timeout);
    for (uint16_t tag = 0; tag < slots_.size(); ++tag) {
      Slot& s = slots_[tag];
      if (!s.active || s.path < 0 || s.timed_out) continue;
      if (now - s.submit_ns <= limit) continue;
      s.timed_out = true;
      ++stats_.paths[s.path].timeouts;
      backend_.paths().OnFailure(s.path, now);
      if (options_.defect == SeededDefect::kRetryTimedOutAtOnce) {
        AbandonCommand(tag, now);
        s.timed_out = false;
        ++s.attempts;
        Dispatch(tag, now);
      }
    }
  }
  if (!waiting_.empty()) {
    std::deque<uint16_t> waiting;
    waiting.swap(waiting_);
    for (const uint16_t tag : waiting) {
      Slot& s = slots_[tag];
      if (!s.active || !s.waiting) continue;
      if (now >= s.wait_deadline_ns) {
        ++stats_.no_path_timeouts;
        Finish(tag, -EIO);
        continue;
      }
      s.waiting = false;
      Dispatch(tag, now);
    }
  }
  if (!delayed_.empty()) ServiceDelayed(now);
  StartProbes(now);
  backend_.Publish(context_.queue_id(), stats_);
  ArmTimer();
}

void NvmeQueue::Poll() {
  const int64_t now = backend_.Now();
  if (now >= next_service_ns_) Service(now);
}

bool NvmeQueue::NeedsTimer() const {
  if (in_flight_ > 0 || !waiting_.empty() || !delayed_.empty() ||
      backend_.paths().AnyFailed()) {
    return true;
  }
  return std::find(probing_.begin(), probing_.end(), true) != probing_.end();
}

void NvmeQueue::ArmTimer() {
  if (timer_armed_ || !NeedsTimer()) return;
  io_uring_sqe* sqe = context_.GetSqe();
  if (sqe == nullptr) return;
  timer_ts_ = {.tv_sec = 0, .tv_nsec = kTimerNs};
  io_uring_prep_timeout(sqe, &timer_ts_, 0, 0);
  sqe->user_data =
      ublk::QueueContext::BackendUserData(Cookie(Kind::kTimer, 0, 0));
  timer_armed_ = true;
}

void NvmeQueue::Cancel(uint16_t tag) {
  if (tag >= slots_.size()) return;
  Slot& s = slots_[tag];
  if (s.active && s.path >= 0) {
    AbandonCommand(tag, backend_.Now());
  } else {
    s.path = -1;
    ++s.generation;
  }
  s.active = false;
  s.waiting = false;
  s.delayed = false;
}

}  // namespace pathwise::datapath

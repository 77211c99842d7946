// SPDX-License-Identifier: Apache-2.0
#include "datapath/path_state.h"

namespace pathwise::datapath {

model::Op ModelOpOf(ublk::IoOp op) {
  switch (op) {
    case ublk::IoOp::kRead:
      return model::Op::kRead;
    case ublk::IoOp::kWrite:
      return model::Op::kWrite;
    case ublk::IoOp::kFlush:
      return model::Op::kFlush;
    case ublk::IoOp::kDiscard:
      return model::Op::kDiscard;
    case ublk::IoOp::kWriteZeroes:
      return model::Op::kOther;
  }
  return model::Op::kOther;
}

void PathStats::Merge(const PathStats& o) {
  ios += o.ios;
  bytes += o.bytes;
  errors += o.errors;
  failovers += o.failovers;
  selections += o.selections;
  timeouts += o.timeouts;
  probes += o.probes;
  probe_failures += o.probe_failures;
  fenced_writes += o.fenced_writes;
  for (size_t i = 0; i < errors_by_class.size(); ++i) {
    errors_by_class[i] += o.errors_by_class[i];
  }
  transport_errors += o.transport_errors;
  latency.Merge(o.latency);
  for (size_t i = 0; i < by_op.size(); ++i) by_op[i].Merge(o.by_op[i]);
}

void PathStats::RecordOp(model::Op op, uint64_t op_bytes, int64_t latency_ns) {
  model::OpStats& s = by_op[model::Index(op)];
  const uint64_t ns = static_cast<uint64_t>(latency_ns > 0 ? latency_ns : 0);
  ++s.completed;
  s.bytes += op_bytes;
  s.time_ns += ns;
  if (!s.latency) s.latency.emplace();
  s.latency->Observe(ns);
}

void DatapathStats::Merge(const DatapathStats& o) {
  if (paths.size() < o.paths.size()) paths.resize(o.paths.size());
  for (size_t i = 0; i < o.paths.size(); ++i) paths[i].Merge(o.paths[i]);
  requests += o.requests;
  failed_requests += o.failed_requests;
  no_path_waits += o.no_path_waits;
  no_path_timeouts += o.no_path_timeouts;
}

PathStates::PathStates(int paths, const RetryPolicy& retry)
    : health_(static_cast<size_t>(paths), PathHealth(retry)),
      ana_(static_cast<size_t>(paths), model::AnaState::kUnknown),
      ana_pending_(static_cast<size_t>(paths), false) {}

bool PathStates::UsableLocked(size_t path) const {
  return !health_[path].failed() && !ana_pending_[path] &&
         model::AnaAllowsIo(ana_[path]);
}

PathStatus PathStates::Get(int path) const {
  absl::MutexLock l(&mu_);
  PathStatus s;
  s.failed = health_[path].failed();
  s.probing = health_[path].probing();
  s.ana = ana_[path];
  s.ana_pending = ana_pending_[path];
  return s;
}

std::vector<policy::PathInfo> PathStates::Infos() const {
  absl::MutexLock l(&mu_);
  std::vector<policy::PathInfo> out(health_.size());
  for (size_t i = 0; i < health_.size(); ++i) {
    out[i].usable = UsableLocked(i);
    out[i].optimized = ana_[i] != model::AnaState::kNonOptimized;
    out[i].controller = static_cast<int>(i);
  }
  return out;
}

bool PathStates::AnyUsable() const {
  absl::MutexLock l(&mu_);
  for (size_t i = 0; i < health_.size(); ++i) {
    if (UsableLocked(i)) return true;
  }
  return false;
}

void PathStates::SetAnaState(int path, model::AnaState state) {
  absl::MutexLock l(&mu_);
  if (ana_[path] == state && !ana_pending_[path]) return;
  ana_[path] = state;
  ana_pending_[path] = false;
  Bump();
}

void PathStates::OnAnaError(int path, int64_t now_ns) {
  if (!on_ana_error_) {
    OnFailure(path, now_ns);
    return;
  }
  {
    absl::MutexLock l(&mu_);
    if (!ana_pending_[path]) {
      ana_pending_[path] = true;
      Bump();
    }
  }
  // Outside the lock: the handler may read the paths' state.
  on_ana_error_(path);
}

void PathStates::OnAnaReadFailed(int path, int64_t now_ns) {
  absl::MutexLock l(&mu_);
  if (!ana_pending_[path]) return;
  ana_pending_[path] = false;
  FailLocked(path, now_ns);
  Bump();
}

void PathStates::FailLocked(int path, int64_t now_ns) {
  if (health_[path].OnFailure(now_ns)) {
    failed_count_.fetch_add(1, std::memory_order_acq_rel);
    Bump();
  }
}

void PathStates::OnFailure(int path, int64_t now_ns) {
  absl::MutexLock l(&mu_);
  FailLocked(path, now_ns);
}

bool PathStates::ClaimProbe(int path, int64_t now_ns) {
  absl::MutexLock l(&mu_);
  if (!health_[path].ProbeDue(now_ns)) return false;
  health_[path].OnProbeStart();
  return true;
}

void PathStates::OnProbeResult(int path, bool ok, int64_t now_ns) {
  absl::MutexLock l(&mu_);
  if (health_[path].OnProbeResult(ok, now_ns)) {
    failed_count_.fetch_sub(1, std::memory_order_acq_rel);
    Bump();
  }
}

}  // namespace pathwise::datapath

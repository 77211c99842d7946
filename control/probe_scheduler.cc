// SPDX-License-Identifier: Apache-2.0
#include "control/probe_scheduler.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "nvme/status.h"
#include "spdlog/spdlog.h"

namespace pathwise::control {
namespace {

std::string ErrnoText(int err) {
  return absl::StrCat(std::strerror(err), " (errno ", err, ")");
}

// Whether the handle is no use any more after this errno: the device
// behind it is gone, so the next probe reopens it by name.
bool HandleIsStale(int err) {
  return err == ENODEV || err == ENXIO || err == EBADF;
}

}  // namespace

model::ProbeFailure FailureOfErrno(int err) {
  switch (err) {
    case EACCES:
    case EPERM:
    case ENOENT:
    case ENOTTY:
    case EOPNOTSUPP:
    case EINVAL:
    case ENOSYS:
      return model::ProbeFailure::kUnavailable;
    default:
      return model::ProbeFailure::kTransport;
  }
}

ProbeScheduler::~ProbeScheduler() {
  for (auto& [name, c] : controllers_) CloseHandle(c);
}

void ProbeScheduler::SetControllers(const std::vector<std::string>& names,
                                    absl::Time now) {
  std::map<std::string, Controller, std::less<>> next;
  for (const std::string& n : names) {
    if (auto it = controllers_.find(n); it != controllers_.end()) {
      next.emplace(n, std::move(it->second));
      controllers_.erase(it);
    } else {
      next[n].next = now;
    }
  }
  // The ones that left. An outstanding probe of theirs stays in inflight_
  // until the kernel completes it, and is then ignored.
  for (auto& [name, c] : controllers_) {
    spdlog::info(
        "probe {}: the controller left the topology; probes of it "
        "stop{}",
        name, c.tag ? " (one still outstanding, left to the kernel)" : "");
    CloseHandle(c);
  }
  controllers_ = std::move(next);
}

void ProbeScheduler::CloseHandle(Controller& c) {
  if (c.handle >= 0) device_.Close(c.handle);
  c.handle = -1;
  // The device opened next may be another one: ask it about ANA afresh,
  // and read its page at its first successful probe.
  c.ana_unsupported = false;
  c.probes_until_ana = 0;
}

absl::Time ProbeScheduler::Step(absl::Time now) {
  absl::Time due = absl::InfiniteFuture();
  for (auto& [name, c] : controllers_) {
    if (c.tag) {
      if (!c.timed_out && now - c.sent >= options_.timeout) {
        c.timed_out = true;
        Fail(name, c, model::ProbeFailure::kTimeout,
             absl::StrCat("no completion within ",
                          absl::FormatDuration(options_.timeout),
                          "; no new probe until the kernel completes it"));
      }
      if (!c.timed_out) due = std::min(due, c.sent + options_.timeout);
      continue;
    }
    if (now >= c.next) {
      // On schedule, unless the prober fell behind: then from now, without
      // a burst.
      c.next += options_.interval;
      if (c.next <= now) c.next = now + options_.interval;
      Probe(name, c, now);
      if (c.tag) due = std::min(due, c.sent + options_.timeout);
    }
    if (!c.tag) due = std::min(due, c.next);
  }
  return due;
}

void ProbeScheduler::Probe(const std::string& name, Controller& c,
                           absl::Time now) {
  if (c.handle >= 0 && !device_.Current(c.handle, name)) {
    spdlog::info(
        "probe {}: {}/{} is no longer the device probed so far; "
        "reopening",
        name, options_.dev_dir, name);
    CloseHandle(c);
  }
  if (c.handle < 0) {
    const int h = device_.Open(name);
    if (h < 0) {
      const bool denied = -h == EACCES || -h == EPERM;
      Fail(name, c, FailureOfErrno(-h),
           absl::StrCat("open ", options_.dev_dir, "/", name, ": ",
                        ErrnoText(-h),
                        denied ? " (probes need read access to the "
                                 "controller char device)"
                               : ""));
      return;
    }
    c.handle = h;
  }
  const uint64_t tag = next_tag_++;
  const int rc = device_.Send(c.handle, tag);
  if (rc < 0) {
    Fail(name, c, FailureOfErrno(-rc),
         absl::StrCat("submit: ", ErrnoText(-rc)));
    if (HandleIsStale(-rc)) CloseHandle(c);
    return;
  }
  c.tag = tag;
  c.sent = now;
  c.timed_out = false;
  inflight_[tag] = name;
}

void ProbeScheduler::Complete(uint64_t tag, int32_t res, absl::Time now) {
  auto in = inflight_.find(tag);
  if (in == inflight_.end()) return;
  const std::string name = std::move(in->second);
  inflight_.erase(in);
  auto it = controllers_.find(name);
  // A probe of a controller that left, or of an earlier device of the same
  // name.
  if (it == controllers_.end() || it->second.tag != tag) return;
  Controller& c = it->second;
  c.tag.reset();
  const nvme::PassthruResult r = nvme::DecodePassthruResult(res);
  if (c.timed_out) {
    // Counted as a timeout already; only the controller's reachability is
    // news.
    c.stats.unreachable = r.kind != nvme::PassthruResult::Kind::kSuccess;
    if (r.kind == nvme::PassthruResult::Kind::kErrno &&
        HandleIsStale(r.error)) {
      CloseHandle(c);
    }
    return;
  }
  switch (r.kind) {
    case nvme::PassthruResult::Kind::kSuccess: {
      const int64_t ns = absl::ToInt64Nanoseconds(now - c.sent);
      const uint64_t latency = ns > 0 ? static_cast<uint64_t>(ns) : 0;
      c.stats.latency.Observe(latency);
      c.stats.latency_sum_ns += latency;
      Succeed(name, c);
      break;
    }
    case nvme::PassthruResult::Kind::kNvmeStatus:
      Fail(name, c, model::ProbeFailureOf(r.status_class),
           absl::StrCat("NVMe status 0x", absl::Hex(r.status)));
      break;
    case nvme::PassthruResult::Kind::kErrno:
      // EACCES here is the kernel's passthru check: CAP_SYS_ADMIN before
      // Linux 6.2 (nvme/admin.h).
      Fail(name, c, FailureOfErrno(r.error),
           absl::StrCat("completion: ", ErrnoText(r.error),
                        r.error == EACCES || r.error == EPERM
                            ? " (Identify needs CAP_SYS_ADMIN before Linux "
                              "6.2)"
                            : ""));
      if (HandleIsStale(r.error)) CloseHandle(c);
      break;
  }
}

void ProbeScheduler::Fail(const std::string& name, Controller& c,
                          model::ProbeFailure f, const std::string& why) {
  ++c.stats.failures[model::Index(f)];
  if (f != model::ProbeFailure::kUnavailable) {
    c.stats.unreachable = model::ProbeFailureMeansUnreachable(f);
  }
  if (why != c.last_problem) {
    if (f == model::ProbeFailure::kUnavailable) {
      spdlog::warn("probe {}: cannot probe: {}", name, why);
    } else {
      spdlog::warn("probe {} failed: {}", name, why);
    }
    c.last_problem = why;
  }
}

void ProbeScheduler::Succeed(const std::string& name, Controller& c) {
  c.stats.unreachable = false;
  if (!c.last_problem.empty()) {
    spdlog::info("probe {} recovered", name);
    c.last_problem.clear();
  }
  MaybeReadAna(name, c);
}

void ProbeScheduler::SetAnaWanted(const std::vector<std::string>& names) {
  for (auto& [name, c] : controllers_) {
    const bool wanted =
        options_.ana_every > 0 &&
        std::find(names.begin(), names.end(), name) != names.end();
    if (wanted == c.ana_wanted) continue;
    c.ana_wanted = wanted;
    c.probes_until_ana = 0;  // at the next successful probe
    // An outstanding read completes into nothing (CompleteAna checks).
    if (!wanted) {
      c.ana.reset();
      c.ana_tag.reset();
      c.ana_unsupported = false;
    }
  }
}

// After a successful probe: the probe's Identify data is what sizes the
// page, and a controller that answers it answers this too. One read per
// controller at a time; one that never completes stops further reads of
// that controller until the kernel completes or cancels it.
void ProbeScheduler::MaybeReadAna(const std::string& name, Controller& c) {
  if (!c.ana_wanted || c.ana_unsupported || c.ana_tag || c.handle < 0) return;
  if (c.probes_until_ana-- > 0) return;
  c.probes_until_ana = options_.ana_every - 1;
  const uint64_t tag = next_tag_++;
  const int rc = device_.SendAnaLog(c.handle, tag);
  if (rc == -EOPNOTSUPP) {
    spdlog::info(
        "probe {}: the controller does not report ANA; no ANA log page "
        "reads",
        name);
    c.ana_unsupported = true;
    c.ana.reset();
    return;
  }
  if (rc < 0) {
    AnaFailed(name, c, absl::StrCat("submit: ", ErrnoText(-rc)));
    return;
  }
  c.ana_tag = tag;
  ana_inflight_[tag] = name;
}

void ProbeScheduler::AnaFailed(const std::string& name, Controller& c,
                               std::string why) {
  if (!c.ana) c.ana.emplace();
  if (why != c.ana->error) {
    spdlog::warn("probe {}: ANA log page: {}", name, why);
  }
  c.ana->error = std::move(why);
}

void ProbeScheduler::CompleteAna(uint64_t tag,
                                 const absl::StatusOr<nvme::AnaLog>& log,
                                 absl::Time now) {
  auto in = ana_inflight_.find(tag);
  if (in == ana_inflight_.end()) return;
  const std::string name = std::move(in->second);
  ana_inflight_.erase(in);
  auto it = controllers_.find(name);
  if (it == controllers_.end() || it->second.ana_tag != tag) return;
  Controller& c = it->second;
  c.ana_tag.reset();
  if (!log.ok()) {
    AnaFailed(name, c, std::string(log.status().message()));
    return;
  }
  model::ControllerAnaLog out;
  out.change_count = log->change_count;
  out.read_at = now;
  for (const nvme::AnaGroup& g : log->groups) {
    out.groups.push_back({.id = g.id, .state = g.state, .nsids = g.nsids});
  }
  if (c.ana && !c.ana->error.empty()) {
    spdlog::info("probe {}: ANA log page read again", name);
  }
  c.ana = std::move(out);
}

std::map<std::string, model::ControllerAnaLog, std::less<>>
ProbeScheduler::AnaLogs() const {
  std::map<std::string, model::ControllerAnaLog, std::less<>> out;
  for (const auto& [name, c] : controllers_) {
    if (c.ana_wanted && c.ana) out.emplace(name, *c.ana);
  }
  return out;
}

std::map<std::string, model::ControllerProbeStats, std::less<>>
ProbeScheduler::Stats(absl::Time now) const {
  std::map<std::string, model::ControllerProbeStats, std::less<>> out;
  for (const auto& [name, c] : controllers_) {
    model::ControllerProbeStats s = c.stats;
    // Overdue is unreachable at once, whether or not the prober's thread
    // has counted the timeout yet.
    if (c.tag && now - c.sent >= options_.timeout) s.unreachable = true;
    out.emplace(name, std::move(s));
  }
  return out;
}

}  // namespace pathwise::control

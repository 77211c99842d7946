// SPDX-License-Identifier: Apache-2.0
#include "datapath/ana_monitor.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "absl/strings/str_cat.h"
#include "exporters/labels.h"
#include "nvme/ana_read.h"

namespace pathwise::datapath {
namespace {

// The kernel's words for the states (sysfs ana_state), for the log lines.
std::string StateWord(model::AnaState s) {
  const absl::string_view word = exporters::AnaStateLabel(s);
  return word.empty() ? "unknown" : std::string(word);
}

}  // namespace

ControllerAnaSource::ControllerAnaSource(const NamespaceGroup& group,
                                         const std::string& dev_dir,
                                         absl::Duration timeout)
    : timeout_(timeout) {
  for (const NamespacePath& p : group.paths) {
    const std::string dev = absl::StrCat(dev_dir, "/", p.controller);
    const int fd =
        p.controller.empty() ? -1 : open(dev.c_str(), O_RDONLY | O_CLOEXEC);
    fds_.push_back(fd);
    open_errors_.push_back(
        fd >= 0 ? absl::OkStatus()
                : absl::ErrnoToStatus(p.controller.empty() ? ENOENT : errno,
                                      absl::StrCat("open ", dev)));
  }
}

ControllerAnaSource::~ControllerAnaSource() {
  for (int fd : fds_) {
    if (fd >= 0) close(fd);
  }
}

absl::StatusOr<nvme::AdminRing*> ControllerAnaSource::Ring() {
  if (ring_ == nullptr) {
    absl::StatusOr<std::unique_ptr<nvme::AdminRing>> ring =
        nvme::AdminRing::Create(4);
    if (!ring.ok()) return ring.status();
    ring_ = *std::move(ring);
  }
  return ring_.get();
}

absl::StatusOr<nvme::RetryDelayTimes> ControllerAnaSource::ReadRetryDelayTimes(
    int path) {
  if (fds_[path] < 0) return open_errors_[path];
  absl::StatusOr<nvme::AdminRing*> ring = Ring();
  if (!ring.ok()) return ring.status();
  absl::StatusOr<nvme::RetryDelayTimes> t =
      nvme::ReadRetryDelayTimes(**ring, fds_[path], timeout_);
  if (!t.ok()) ring_.reset();  // as in Read
  return t;
}

absl::StatusOr<nvme::AnaLog> ControllerAnaSource::Read(int path) {
  if (fds_[path] < 0) return open_errors_[path];
  absl::StatusOr<nvme::AdminRing*> ring = Ring();
  if (!ring.ok()) return ring.status();
  absl::StatusOr<nvme::AnaLog> log =
      nvme::ReadAnaLog(**ring, fds_[path], {.timeout = timeout_});
  // After a timeout the command still out owns the ring's slot for it (and
  // its buffer); after an io_uring_enter() error it may still be queued in
  // the ring, to go with the next submission. Either way the next read's
  // command would share its tag, and the stale completion would end that
  // read before the device filled its page. Leave both to the kernel and
  // use a new ring next time; a ring is a few system calls, and errors
  // are rare.
  if (!log.ok()) ring_.reset();
  return log;
}

AnaMonitor::AnaMonitor(PathStates& paths, std::vector<uint32_t> nsids,
                       std::vector<std::string> names, AnaSource& source,
                       AnaMonitorOptions options)
    : paths_(paths),
      nsids_(std::move(nsids)),
      names_(std::move(names)),
      source_(source),
      options_(std::move(options)),
      next_read_(nsids_.size(), absl::InfinitePast()),
      no_ana_(nsids_.size(), false),
      last_error_(nsids_.size()),
      requested_(nsids_.size(), false) {}

AnaMonitor::~AnaMonitor() { Stop(); }

void AnaMonitor::Start() {
  ReadDue(absl::Now());
  paths_.SetAnaErrorHandler([this](int path) { Request(path); });
  thread_ = std::thread([this] { Loop(); });
}

void AnaMonitor::Stop() {
  {
    absl::MutexLock l(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void AnaMonitor::Request(int path) {
  absl::MutexLock l(&mu_);
  if (path < 0 || static_cast<size_t>(path) >= requested_.size()) return;
  requested_[path] = true;
  any_requested_ = true;
}

void AnaMonitor::Log(const std::string& line) const {
  if (options_.log) options_.log(line);
}

int64_t AnaMonitor::NowNs() const {
  if (options_.clock) return options_.clock();
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

absl::Time AnaMonitor::ReadDue(absl::Time now) {
  std::vector<bool> requested;
  {
    absl::MutexLock l(&mu_);
    requested.swap(requested_);
    requested_.assign(requested.size(), false);
    any_requested_ = false;
  }
  absl::Time next = absl::InfiniteFuture();
  for (size_t p = 0; p < nsids_.size(); ++p) {
    const int path = static_cast<int>(p);
    if (requested[p] || (!no_ana_[p] && now >= next_read_[p])) {
      ReadPath(path, now);
    }
    if (!no_ana_[p]) next = std::min(next, next_read_[p]);
  }
  return next;
}

void AnaMonitor::ReadPath(int path, absl::Time now) {
  reads_.fetch_add(1, std::memory_order_relaxed);
  const absl::StatusOr<nvme::AnaLog> log = source_.Read(path);
  next_read_[path] = now + options_.interval;
  const std::string name = absl::StrCat("path ", names_[path]);
  if (!log.ok()) {
    if (absl::IsFailedPrecondition(log.status())) {
      // No ANA reporting: the path stays as it is (optimized) for good.
      if (!no_ana_[path]) {
        Log(absl::StrCat(name, ": ", log.status().message(),
                         "; counted as optimized"));
      }
      no_ana_[path] = true;
    } else {
      const std::string error(log.status().message());
      if (error != last_error_[path]) {
        Log(absl::StrCat(name, ": reading the ANA log page: ", error));
        last_error_[path] = error;
      }
    }
    paths_.OnAnaReadFailed(path, NowNs());
    return;
  }
  last_error_[path].clear();
  no_ana_[path] = false;
  const std::optional<model::AnaState> state =
      nvme::StateOf(*log, nsids_[path]);
  if (!state) {
    Log(absl::StrCat(name, ": no ANA group lists namespace ", nsids_[path]));
    paths_.OnAnaReadFailed(path, NowNs());
    return;
  }
  if (*state == model::AnaState::kChange) {
    next_read_[path] = now + options_.change_interval;
  }
  if (paths_.Get(path).ana != *state) {
    const nvme::AnaGroup* group = nvme::GroupOf(*log, nsids_[path]);
    Log(absl::StrCat(name, ": ANA ", StateWord(*state), " (group ",
                     group != nullptr ? group->id : 0, ")"));
  }
  paths_.SetAnaState(path, *state);
}

void AnaMonitor::Loop() {
  absl::Time next = absl::Now() + options_.interval;
  for (int p = 0; p < static_cast<int>(next_read_.size()); ++p) {
    if (!no_ana_[p]) next = std::min(next, next_read_[p]);
  }
  while (true) {
    {
      absl::MutexLock l(&mu_);
      mu_.AwaitWithDeadline(absl::Condition(this, &AnaMonitor::Woken), next);
      if (stopping_) return;
    }
    next = ReadDue(absl::Now());
    if (next == absl::InfiniteFuture()) next = absl::Now() + options_.interval;
  }
}

}  // namespace pathwise::datapath

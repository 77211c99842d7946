// SPDX-License-Identifier: Apache-2.0
#include "datapath/ublk/device.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <future>
#include <utility>

#include "absl/strings/str_cat.h"
#include "datapath/ublk/scheduler.h"

namespace pathwise::datapath::ublk {

Device::Device(const DeviceOptions& options, Backend& backend,
               std::unique_ptr<ControlDevice> control)
    : options_(options), backend_(backend), control_(std::move(control)) {}

absl::StatusOr<std::unique_ptr<Device>> Device::Create(
    const DeviceOptions& options, Backend& backend) {
  if (absl::Status s = ValidateOptions(options, backend.geometry()); !s.ok()) {
    return s;
  }
  auto control = ControlDevice::Open(options.control_path);
  if (!control.ok()) return control.status();
  std::unique_ptr<Device> d(new Device(options, backend, *std::move(control)));
  if (absl::Status s = d->Start(); !s.ok()) {
    // The destructor would too; here its error is secondary to s.
    (void)d->Stop();
    return s;
  }
  return d;
}

Device::~Device() { (void)Stop(); }

std::string Device::block_path() const {
  return absl::StrCat(options_.dev_dir, "/ublkb", info_.dev_id);
}

std::string Device::char_path() const {
  return absl::StrCat(options_.dev_dir, "/ublkc", info_.dev_id);
}

// A device a dead server left quiesced: START_USER_RECOVERY (the kernel
// refuses it with EBUSY until the dead server's char device is released,
// which follows its exit), the queues fetch again on a new char device fd,
// END_USER_RECOVERY hands the disk and its held I/O to them.
absl::Status Device::Recover() {
  const auto dev_id = static_cast<uint32_t>(options_.recover_dev_id);
  if (absl::Status s = control_->GetDevInfo(dev_id, &info_); !s.ok()) {
    return s;
  }
  if ((info_.flags & UBLK_F_USER_RECOVERY) == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "ublk device ", dev_id, " was not created with user recovery"));
  }
  absl::Status s;
  const absl::Time until = absl::Now() + options_.char_dev_timeout;
  while (!(s = control_->StartUserRecovery(dev_id)).ok() &&
         absl::IsUnavailable(s) && absl::Now() < until) {
    absl::SleepFor(absl::Milliseconds(100));
  }
  if (!s.ok()) return s;
  added_ = true;
  const std::string path = char_path();
  char_fd_ = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (char_fd_ < 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("cannot open ", path));
  }
  if (absl::Status q = StartQueues(); !q.ok()) return q;
  if (absl::Status e = control_->EndUserRecovery(dev_id, getpid()); !e.ok()) {
    return e;
  }
  ApplyScheduler();
  return absl::OkStatus();
}

absl::Status Device::Start() {
  if (options_.recover_dev_id >= 0) return Recover();
  info_ = BuildDevInfo(options_);
  if (absl::Status s = control_->AddDev(&info_); !s.ok()) return s;
  added_ = true;
  // The kernel may have cut the queue count (to the CPUs) and rounded the
  // buffer size down to pages; everything below follows its answer.
  ublk_params params = BuildParams(backend_.geometry(), info_.max_io_buf_bytes);
  if (absl::Status s = control_->SetParams(info_.dev_id, &params); !s.ok()) {
    return s;
  }
  // devtmpfs creates the node shortly after ADD_DEV.
  const absl::Time until = absl::Now() + options_.char_dev_timeout;
  const std::string path = char_path();
  while ((char_fd_ = open(path.c_str(), O_RDWR | O_CLOEXEC)) < 0) {
    if (errno != ENOENT || absl::Now() >= until) {
      return absl::ErrnoToStatus(errno, absl::StrCat("cannot open ", path));
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  if (absl::Status s = StartQueues(); !s.ok()) return s;
  if (absl::Status s = control_->StartDev(info_.dev_id, getpid()); !s.ok()) {
    return s;
  }
  ApplyScheduler();
  return absl::OkStatus();
}

// START_DEV has added the disk, so its queue attributes exist. A scheduler
// that cannot be set (a read-only /sys, a name this kernel lacks) leaves
// the kernel's, which works, only slower: the caller reports it.
void Device::ApplyScheduler() {
  const std::string disk = absl::StrCat("ublkb", info_.dev_id);
  absl::StatusOr<std::string> now =
      options_.scheduler == kKernelScheduler
          ? ReadScheduler(options_.sysfs_root, disk)
          : SetScheduler(options_.sysfs_root, disk, options_.scheduler);
  if (!now.ok()) {
    scheduler_status_ = now.status();
    absl::StatusOr<std::string> kept = ReadScheduler(options_.sysfs_root, disk);
    scheduler_ = kept.ok() ? *kept : "unknown";
    return;
  }
  scheduler_ = *now;
  if (options_.scheduler != kKernelScheduler &&
      scheduler_ != options_.scheduler) {
    scheduler_status_ = absl::FailedPreconditionError(
        absl::StrCat("the kernel kept '", scheduler_, "' after '",
                     options_.scheduler, "' was written"));
  }
}

absl::Status Device::StartQueues() {
  const Geometry geometry = backend_.geometry();
  std::vector<std::future<absl::Status>> ready;
  for (uint16_t q = 0; q < info_.nr_hw_queues; ++q) {
    QueueConfig c;
    c.char_fd = char_fd_;
    c.queue_id = q;
    c.depth = info_.queue_depth;
    c.buffer_bytes = info_.max_io_buf_bytes;
    c.ioctl_encoded = control_->ioctl_encoded();
    c.geometry = geometry;
    c.abort_grace = options_.abort_grace;
    // Where blk-mq issues this queue's requests; unknown (the kernel
    // refused the query): the thread is left unpinned.
    if (absl::StatusOr<cpu_set_t> cpus =
            control_->GetQueueAffinity(info_.dev_id, q);
        cpus.ok() && CPU_COUNT(&*cpus) > 0) {
      c.cpus = *cpus;
    }
    queues_.push_back(std::make_unique<Queue>(c, backend_));
    auto promise = std::make_shared<std::promise<absl::Status>>();
    ready.push_back(promise->get_future());
    Queue* queue = queues_.back().get();
    threads_.emplace_back([queue, promise, q] {
      // Named for ps/top and /proc/PID/task: one thread per ublk queue.
      pthread_setname_np(pthread_self(), absl::StrCat("pw-ublk-q", q).c_str());
      absl::Status s = queue->Setup();
      const bool ok = s.ok();
      promise->set_value(std::move(s));
      if (ok) queue->Run();
    });
  }
  absl::Status first;
  for (auto& f : ready) first.Update(f.get());
  return first;
}

absl::Status Device::Teardown() {
  absl::Status first;
  for (auto& q : queues_) q->RequestStop();
  // Also for a device that never started: STOP_DEV aborts the FETCHes of
  // queues that did set up, so their threads end.
  first.Update(control_->StopDev(info_.dev_id));
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  // The queues' rings and mappings hold the char device open, and DEL_DEV
  // waits for its last user.
  for (const auto& q : queues_) final_counters_.push_back(q->counters());
  queues_.clear();
  if (char_fd_ >= 0) {
    close(char_fd_);
    char_fd_ = -1;
  }
  first.Update(control_->DelDev(info_.dev_id));
  return first;
}

absl::Status Device::Stop() {
  if (stopped_) return absl::OkStatus();
  stopped_ = true;
  if (!added_) return absl::OkStatus();
  return Teardown();
}

QueueCounters Device::counters() const {
  QueueCounters sum;
  for (const QueueCounters& c : final_counters_) {
    sum.requests += c.requests;
    sum.completed += c.completed;
    sum.failed += c.failed;
    sum.rejected += c.rejected;
    sum.abandoned += c.abandoned;
    sum.stray_completions += c.stray_completions;
    sum.command_errors += c.command_errors;
  }
  return sum;
}

}  // namespace pathwise::datapath::ublk

#include "control/prober.h"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <map>

#include "absl/strings/str_cat.h"
#include "nvme/admin.h"
#include "nvme/uring.h"
#include "spdlog/spdlog.h"

namespace pathwise::control {
namespace {

// The wakeup read's tag; probe tags start at 1 and count up.
constexpr uint64_t kWakeTag = 0;

class UringProbeRing : public ProbeRing {
 public:
  UringProbeRing(std::string dev_dir, std::unique_ptr<nvme::AdminRing> ring,
                 int event_fd)
      : dev_dir_(std::move(dev_dir)),
        ring_(std::move(ring)),
        event_fd_(event_fd) {}
  ~UringProbeRing() override {
    ring_.reset();
    close(event_fd_);
    // A probe still outstanding (a hung controller) keeps its buffer's
    // pages mapped for the device, which may still write into them when
    // the kernel completes it after the ring is gone: leak those few KiB
    // rather than hand them back to the allocator.
    for (auto& [tag, buf] : buffers_) (void)buf.release();
  }

  absl::Status Arm() {
    return ring_->SubmitRead(event_fd_, &wake_buf_, kWakeTag);
  }

  int Open(absl::string_view controller) override {
    // Read-only: Identify needs no more (see nvme/admin.h).
    const int fd = open(Path(controller).c_str(), O_RDONLY | O_CLOEXEC);
    return fd >= 0 ? fd : -errno;
  }
  void Close(int handle) override { close(handle); }
  bool Current(int handle, absl::string_view controller) override {
    struct stat by_name, by_fd;
    return stat(Path(controller).c_str(), &by_name) == 0 &&
           fstat(handle, &by_fd) == 0 && S_ISCHR(by_name.st_mode) &&
           by_name.st_rdev == by_fd.st_rdev;
  }
  int Send(int handle, uint64_t tag) override {
    // One 4 KiB buffer per outstanding probe, freed at its completion.
    void* buf = std::aligned_alloc(4096, nvme::kIdentifyDataBytes);
    if (buf == nullptr) return -ENOMEM;
    absl::Status s =
        ring_->SubmitAdmin(handle, nvme::IdentifyController(buf), tag);
    if (!s.ok()) {
      std::free(buf);
      return -EIO;
    }
    buffers_[tag].reset(static_cast<char*>(buf));
    return 0;
  }

  absl::StatusOr<std::vector<Done>> Wait(absl::Duration timeout) override {
    absl::StatusOr<std::vector<nvme::Completion>> got = ring_->Wait(timeout);
    if (!got.ok()) return got.status();
    std::vector<Done> out;
    for (const nvme::Completion& c : *got) {
      if (c.tag == kWakeTag) {
        if (absl::Status s = Arm(); !s.ok()) return s;
        continue;
      }
      buffers_.erase(c.tag);
      out.push_back({c.tag, c.res});
    }
    return out;
  }

  void Wake() override {
    const uint64_t one = 1;
    (void)!write(event_fd_, &one, sizeof(one));
  }

 private:
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  std::string Path(absl::string_view controller) const {
    return absl::StrCat(dev_dir_, "/", controller);
  }

  std::string dev_dir_;
  std::unique_ptr<nvme::AdminRing> ring_;
  int event_fd_;
  uint64_t wake_buf_ = 0;
  std::map<uint64_t, std::unique_ptr<char, Free>> buffers_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<ProbeRing>> MakeUringProbeRing(
    const ProberOptions& options) {
  // A handful of slots: one probe per controller is in flight at most and
  // submissions go in as they are made.
  absl::StatusOr<std::unique_ptr<nvme::AdminRing>> ring =
      nvme::AdminRing::Create(64);
  if (!ring.ok()) return ring.status();
  const int efd = eventfd(0, EFD_CLOEXEC);
  if (efd < 0) {
    return absl::ErrnoToStatus(errno, "eventfd");
  }
  auto r =
      std::make_unique<UringProbeRing>(options.dev_dir, *std::move(ring), efd);
  if (absl::Status s = r->Arm(); !s.ok()) return s;
  return r;
}

Prober::Prober(ProberOptions options, std::unique_ptr<ProbeRing> ring)
    : ring_(std::move(ring)), scheduler_(std::move(options), *ring_) {
  thread_ = std::thread([this] { Run(); });
}

Prober::~Prober() {
  stop_ = true;
  ring_->Wake();
  thread_.join();
}

absl::Status Prober::Read(const model::Topology& topology,
                          model::IoReading& io) {
  std::vector<std::string> names;
  names.reserve(topology.controllers.size());
  for (const model::Controller& c : topology.controllers) {
    names.push_back(c.name);
  }
  absl::Status status;
  {
    absl::MutexLock lock(&mu_);
    const absl::Time now = absl::Now();
    scheduler_.SetControllers(names, now);
    io.controller_probe = scheduler_.Stats(now);
    if (!ring_error_.empty()) {
      status = absl::InternalError(absl::StrCat("probe ring: ", ring_error_));
    }
  }
  // A new controller is probed now, not at the prober's next wakeup.
  ring_->Wake();
  return status;
}

void Prober::Run() {
  while (!stop_) {
    absl::Time due;
    {
      absl::MutexLock lock(&mu_);
      due = scheduler_.Step(absl::Now());
    }
    // Capped so that a lost wakeup costs a second at most.
    const absl::Duration wait =
        std::min(due - absl::Now(), absl::Duration(absl::Seconds(1)));
    absl::StatusOr<std::vector<ProbeRing::Done>> done = ring_->Wait(wait);
    const absl::Time now = absl::Now();
    if (!done.ok()) {
      // Read reports it as the collector's error; retry, slowly.
      const std::string e(done.status().message());
      {
        absl::MutexLock lock(&mu_);
        if (e != ring_error_) spdlog::error("probe ring failed: {}", e);
        ring_error_ = e;
      }
      absl::SleepFor(absl::Milliseconds(100));
      continue;
    }
    absl::MutexLock lock(&mu_);
    ring_error_.clear();
    for (const ProbeRing::Done& d : *done) {
      scheduler_.Complete(d.tag, d.res, now);
    }
  }
}

}  // namespace pathwise::control

// SPDX-License-Identifier: Apache-2.0
#include "control/prober.h"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <set>
#include <span>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "nvme/admin.h"
#include "nvme/ana_log.h"
#include "nvme/ana_read.h"  // kMaxAnaLogBytes
#include "nvme/status.h"
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
    for (auto& [tag, o] : buffers_) (void)o.buf.release();
  }

  absl::Status Arm() {
    return ring_->SubmitRead(event_fd_, &wake_buf_, kWakeTag);
  }

  int Open(absl::string_view controller) override {
    // Read-only: Identify needs no more (see nvme/admin.h).
    const int fd = open(Path(controller).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -errno;
    absl::MutexLock lock(&mu_);
    opened_[fd] = ++opens_;
    return fd;
  }
  void Close(int handle) override {
    {
      absl::MutexLock lock(&mu_);
      opened_.erase(handle);
      identify_.erase(handle);
    }
    close(handle);
  }
  bool Current(int handle, absl::string_view controller) override {
    struct stat by_name, by_fd;
    return stat(Path(controller).c_str(), &by_name) == 0 &&
           fstat(handle, &by_fd) == 0 && S_ISCHR(by_name.st_mode) &&
           by_name.st_rdev == by_fd.st_rdev;
  }
  int Send(int handle, uint64_t tag) override {
    // One 4 KiB buffer per outstanding probe, freed at its completion.
    return Submit(handle, tag, nvme::kIdentifyDataBytes, false);
  }

  int SendAnaLog(int handle, uint64_t tag) override {
    uint64_t bytes = 0;
    {
      absl::MutexLock lock(&mu_);
      auto id = identify_.find(handle);
      // The scheduler reads the page only after a successful probe of this
      // handle, so its Identify data is here.
      if (id == identify_.end()) return -EAGAIN;
      if (!id->second.ana_reporting) return -EOPNOTSUPP;
      bytes = nvme::AnaLogBytes(id->second, false);
    }
    if (bytes > nvme::kMaxAnaLogBytes) return -EFBIG;
    return Submit(handle, tag, bytes, true);
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
      auto it = buffers_.find(c.tag);
      if (it == buffers_.end()) continue;
      Done d{c.tag, c.res};
      const Outstanding& o = it->second;
      const std::span<const std::byte> data(
          reinterpret_cast<const std::byte*>(o.buf.get()), o.bytes);
      if (o.ana) {
        d.ana = c.res == 0 ? nvme::ParseAnaLog(data) : AnaError(c.res);
      } else if (c.res == 0) {
        // The page's size comes from the controller's latest Identify, if
        // the handle is still the one it was sent on.
        absl::StatusOr<nvme::AnaIdentify> id = nvme::ParseAnaIdentify(data);
        absl::MutexLock lock(&mu_);
        auto open = opened_.find(o.handle);
        if (id.ok() && open != opened_.end() && open->second == o.open) {
          identify_[o.handle] = *id;
        }
      }
      buffers_.erase(it);
      out.push_back(std::move(d));
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
  // A command's data buffer, and what to make of it at completion.
  struct Outstanding {
    std::unique_ptr<char, Free> buf;
    size_t bytes = 0;
    bool ana = false;  // an ANA log page read, else a probe
    int handle = -1;
    uint64_t open = 0;  // which opening of `handle` it was sent on
  };

  std::string Path(absl::string_view controller) const {
    return absl::StrCat(dev_dir_, "/", controller);
  }

  int Submit(int handle, uint64_t tag, size_t bytes, bool ana) {
    // Page aligned and zeroed: a page returned short reads as zeros.
    const size_t rounded = (bytes + 4095) / 4096 * 4096;
    void* buf = std::aligned_alloc(4096, rounded);
    if (buf == nullptr) return -ENOMEM;
    std::memset(buf, 0, rounded);
    const nvme_uring_cmd cmd =
        ana ? nvme::GetLogPageAna(buf, static_cast<uint32_t>(bytes), false)
            : nvme::IdentifyController(buf);
    if (!ring_->SubmitAdmin(handle, cmd, tag).ok()) {
      std::free(buf);
      return -EIO;
    }
    uint64_t opening = 0;
    {
      absl::MutexLock lock(&mu_);
      auto open = opened_.find(handle);
      if (open != opened_.end()) opening = open->second;
    }
    buffers_[tag] =
        Outstanding{.buf = std::unique_ptr<char, Free>(static_cast<char*>(buf)),
                    .bytes = bytes,
                    .ana = ana,
                    .handle = handle,
                    .open = opening};
    return 0;
  }

  static absl::Status AnaError(int32_t res) {
    const nvme::PassthruResult r = nvme::DecodePassthruResult(res);
    if (r.kind == nvme::PassthruResult::Kind::kNvmeStatus) {
      return absl::InternalError(
          absl::StrCat("Get Log Page: NVMe status 0x", absl::Hex(r.status)));
    }
    return absl::Status(absl::ErrnoToStatusCode(r.error),
                        absl::StrCat("Get Log Page: ", std::strerror(r.error),
                                     r.error == EACCES || r.error == EPERM
                                         ? " (it needs CAP_SYS_ADMIN)"
                                         : ""));
  }

  std::string dev_dir_;
  std::unique_ptr<nvme::AdminRing> ring_;
  int event_fd_;
  uint64_t wake_buf_ = 0;
  // The prober thread's alone (Send, SendAnaLog and Wait run there).
  std::map<uint64_t, Outstanding> buffers_;
  // Close also runs on the collection thread (a controller that left).
  absl::Mutex mu_;
  // Open handles, each with the number of its opening (a closed fd number
  // is reused by the next open).
  std::map<int, uint64_t> opened_ ABSL_GUARDED_BY(mu_);
  uint64_t opens_ ABSL_GUARDED_BY(mu_) = 0;
  // The ANA fields of each open handle's latest Identify Controller data.
  std::map<int, nvme::AnaIdentify> identify_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

std::vector<std::string> AnaWanted(const model::Topology& topology) {
  std::set<absl::string_view> known;
  for (const model::Path& p : topology.paths) {
    if (p.ana_state != model::AnaState::kUnknown ||
        !p.unknown_ana_state.empty()) {
      known.insert(p.controller);
    }
  }
  std::vector<std::string> out;
  for (const model::Controller& c : topology.controllers) {
    if (!known.contains(c.name)) out.push_back(c.name);
  }
  return out;
}

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
    scheduler_.SetAnaWanted(AnaWanted(topology));
    io.controller_probe = scheduler_.Stats(now);
    io.controller_ana = scheduler_.AnaLogs();
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
    // The prober's own thread: an exception escaping it would end the
    // process, so it fails the turn like the ring would.
    try {
      Turn();
    } catch (const std::exception& e) {
      Failed(absl::StrCat("probe thread: ", e.what()));
    }
  }
}

void Prober::Failed(const std::string& error) {
  {
    absl::MutexLock lock(&mu_);
    if (error != ring_error_) spdlog::error("probe ring failed: {}", error);
    ring_error_ = error;
  }
  // Retried, slowly.
  absl::SleepFor(absl::Milliseconds(100));
}

void Prober::Turn() {
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
    Failed(std::string(done.status().message()));
    return;
  }
  absl::MutexLock lock(&mu_);
  ring_error_.clear();
  for (const ProbeRing::Done& d : *done) {
    if (d.ana) {
      scheduler_.CompleteAna(d.tag, *d.ana, now);
    } else {
      scheduler_.Complete(d.tag, d.res, now);
    }
  }
}

}  // namespace pathwise::control

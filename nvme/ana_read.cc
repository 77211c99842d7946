// SPDX-License-Identifier: Apache-2.0
#include "nvme/ana_read.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "nvme/admin.h"
#include "nvme/status.h"

namespace pathwise::nvme {
namespace {

struct Free {
  void operator()(std::byte* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<std::byte, Free>;

Buffer Allocate(size_t bytes) {
  // Page aligned and zeroed: the device writes at most `bytes`, and a page
  // it returns short leaves zeros (no descriptors) rather than garbage.
  const size_t rounded = (bytes + 4095) / 4096 * 4096;
  auto* p = static_cast<std::byte*>(std::aligned_alloc(4096, rounded));
  if (p != nullptr) std::memset(p, 0, rounded);
  return Buffer(p);
}

// Sends `cmd` (whose data buffer is `buf`) and waits for its completion.
// On a timeout the buffer is released to the kernel: the device may still
// write into it.
absl::Status Run(AdminRing& ring, int fd, const nvme_uring_cmd& cmd,
                 Buffer& buf, absl::string_view what, absl::Duration timeout) {
  constexpr uint64_t kTag = 1;
  if (absl::Status s = ring.SubmitAdmin(fd, cmd, kTag); !s.ok()) return s;
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      (void)buf.release();
      return absl::DeadlineExceededError(absl::StrCat(
          what, ": no completion within ", absl::FormatDuration(timeout)));
    }
    absl::StatusOr<std::vector<Completion>> got = ring.Wait(left);
    if (!got.ok()) {
      (void)buf.release();
      return got.status();
    }
    for (const Completion& c : *got) {
      if (c.tag != kTag) continue;
      const PassthruResult r = DecodePassthruResult(c.res);
      switch (r.kind) {
        case PassthruResult::Kind::kSuccess:
          return absl::OkStatus();
        case PassthruResult::Kind::kNvmeStatus:
          return absl::InternalError(
              absl::StrCat(what, ": NVMe status 0x", absl::Hex(r.status)));
        case PassthruResult::Kind::kErrno:
          return absl::Status(
              absl::ErrnoToStatusCode(r.error),
              absl::StrCat(what, ": ", std::strerror(r.error),
                           r.error == EACCES || r.error == EPERM
                               ? " (Get Log Page needs CAP_SYS_ADMIN)"
                               : ""));
      }
    }
  }
}

}  // namespace

absl::StatusOr<AnaLog> ReadAnaLog(AdminRing& ring, int fd,
                                  const AnaReadOptions& options) {
  Buffer id = Allocate(kIdentifyDataBytes);
  if (id == nullptr) return absl::ResourceExhaustedError("out of memory");
  if (absl::Status s = Run(ring, fd, IdentifyController(id.get()), id,
                           "Identify Controller", options.timeout);
      !s.ok()) {
    return s;
  }
  absl::StatusOr<AnaIdentify> ident = ParseAnaIdentify(
      std::span<const std::byte>(id.get(), kIdentifyDataBytes));
  if (!ident.ok()) return ident.status();
  if (!ident->ana_reporting) {
    return absl::FailedPreconditionError(
        "the controller does not report ANA (Identify Controller CMIC bit 3 "
        "clear)");
  }
  const uint64_t bytes = AnaLogBytes(*ident, options.rgo);
  if (bytes > kMaxAnaLogBytes) {
    return absl::OutOfRangeError(absl::StrCat(
        "ANA log page of ", bytes, " bytes (NANAGRPID ", ident->nanagrpid,
        ", MNAN ", ident->mnan, ", NN ", ident->nn, ") is over the ",
        kMaxAnaLogBytes, " bytes read"));
  }
  Buffer page = Allocate(bytes);
  if (page == nullptr) return absl::ResourceExhaustedError("out of memory");
  if (absl::Status s = Run(
          ring, fd,
          GetLogPageAna(page.get(), static_cast<uint32_t>(bytes), options.rgo),
          page, "Get Log Page (ANA)", options.timeout);
      !s.ok()) {
    return s;
  }
  return ParseAnaLog(std::span<const std::byte>(page.get(), bytes));
}

absl::StatusOr<RetryDelayTimes> ReadRetryDelayTimes(AdminRing& ring, int fd,
                                                    absl::Duration timeout) {
  Buffer id = Allocate(kIdentifyDataBytes);
  if (id == nullptr) return absl::ResourceExhaustedError("out of memory");
  if (absl::Status s = Run(ring, fd, IdentifyController(id.get()), id,
                           "Identify Controller", timeout);
      !s.ok()) {
    return s;
  }
  return ParseRetryDelayTimes(
      std::span<const std::byte>(id.get(), kIdentifyDataBytes));
}

}  // namespace pathwise::nvme

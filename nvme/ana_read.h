// SPDX-License-Identifier: Apache-2.0
// Reading a controller's ANA log page through an AdminRing, synchronously:
// Identify Controller for the page's size, then Get Log Page. For a
// one-shot caller (a tool, a datapath's start); a caller with a ring of its
// own to share (the prober) sends GetLogPageAna itself and parses with
// ParseAnaLog.
#ifndef PATHWISE_NVME_ANA_READ_H_
#define PATHWISE_NVME_ANA_READ_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "nvme/ana_log.h"
#include "nvme/status.h"
#include "nvme/uring.h"

namespace pathwise::nvme {

// The largest page ReadAnaLog asks for: far above what a real controller
// needs (16 + 32 per group + 4 per namespace), and below what every
// transport moves in one command.
inline constexpr uint64_t kMaxAnaLogBytes = 256 * 1024;

struct AnaReadOptions {
  // Per command; a command still outstanding then is left to the kernel
  // (its buffer with it).
  absl::Duration timeout = absl::Seconds(5);
  bool rgo = false;  // Return Groups Only: no namespace ids
};

// Reads the ANA log page of the controller open as `fd` (/dev/nvmeX; read
// access is enough to open it, the Get Log Page needs CAP_SYS_ADMIN), using
// `ring`, which must have no other command outstanding (after an error it
// may still have one: on a timeout, or when io_uring_enter() failed and
// left it queued; use another ring). FailedPrecondition
// when the controller does not report ANA (CMIC bit 3 clear);
// DeadlineExceeded on a timeout; the command's NVMe status or errno as the
// message otherwise.
absl::StatusOr<AnaLog> ReadAnaLog(AdminRing& ring, int fd,
                                  const AnaReadOptions& options = {});

// Identify Controller of the controller open as `fd`, for its Command
// Retry Delay Times (nvme/status.h); the same ring rules as ReadAnaLog.
// Identify needs no CAP_SYS_ADMIN on Linux >= 6.2.
absl::StatusOr<RetryDelayTimes> ReadRetryDelayTimes(
    AdminRing& ring, int fd, absl::Duration timeout = absl::Seconds(5));

}  // namespace pathwise::nvme

#endif  // PATHWISE_NVME_ANA_READ_H_

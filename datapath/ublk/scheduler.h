// SPDX-License-Identifier: Apache-2.0
// The ublk block device's I/O scheduler, set once the disk exists.
//
// blk-mq gives a device with one hardware queue mq-deadline by default, and
// the datapath's device has one unless --queues says otherwise. Behind it is
// a multipath device whose paths have queues of their own, as the kernel's
// NVMe devices do (their default is none): an elevator in front only costs
// a lock and a sort per request. In the testbed (one queue, 4 random reads
// outstanding) none served 2669-2963 reads/s against mq-deadline's
// 2529-2559, three rounds each in one boot.
#ifndef PATHWISE_DATAPATH_UBLK_SCHEDULER_H_
#define PATHWISE_DATAPATH_UBLK_SCHEDULER_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace pathwise::datapath::ublk {

// The flag's value that leaves the kernel's choice in place.
inline constexpr absl::string_view kKernelScheduler = "kernel";

// A name the sysfs attribute can take (or kKernelScheduler): lower-case
// letters, digits, '-' and '_', 1..32 characters.
absl::Status ValidateSchedulerName(absl::string_view name);

// The scheduler in effect in a `queue/scheduler` attribute's text: the one in
// brackets ("none [mq-deadline] kyber" -> "mq-deadline"; "none", the text of
// a device that offers no choice, -> "none").
absl::StatusOr<std::string> ActiveScheduler(absl::string_view attribute);

// Writes `name` to <sysfs_root>/block/<disk>/queue/scheduler and returns the
// scheduler in effect afterwards, read back. An error names the file.
absl::StatusOr<std::string> SetScheduler(const std::string& sysfs_root,
                                         const std::string& disk,
                                         const std::string& name);

// Reads the scheduler in effect.
absl::StatusOr<std::string> ReadScheduler(const std::string& sysfs_root,
                                          const std::string& disk);

}  // namespace pathwise::datapath::ublk

#endif  // PATHWISE_DATAPATH_UBLK_SCHEDULER_H_

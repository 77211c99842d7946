// SPDX-License-Identifier: Apache-2.0
// Presenting a sysfs tree other than the live /sys to readers of /sys itself.
//
// Some readers open fixed paths under /sys (the queue map's scans). To
// honour --path.sysfs (and to run unit tests against captured fixture trees
// through the very same code),
// the process enters a private mount namespace and binds the chosen root over
// /sys. Nothing outside the process sees the change. Needs CAP_SYS_ADMIN, and
// must run before the process starts any thread (unshare(CLONE_NEWNS) fails
// in a multi-threaded process).
#ifndef PATHWISE_COLLECTORS_SYSFS_NAMESPACE_H_
#define PATHWISE_COLLECTORS_SYSFS_NAMESPACE_H_

#include <string>

#include "absl/status/status.h"

namespace pathwise::collectors {

// unshare(CLONE_NEWNS) and make every mount private (no propagation back).
absl::Status EnterPrivateMountNamespace();

// Binds `root` over /sys. The caller must be in a private mount namespace.
absl::Status BindOverSys(const std::string& root);

// Undoes the latest BindOverSys().
absl::Status UnbindSys();

// If `root` is /sys itself, does nothing. Otherwise enters a private mount
// namespace and binds `root` over /sys.
absl::Status PresentSysfsRoot(const std::string& root);

}  // namespace pathwise::collectors

#endif  // PATHWISE_COLLECTORS_SYSFS_NAMESPACE_H_

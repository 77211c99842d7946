// SPDX-License-Identifier: Apache-2.0
// The pure half of the NVMe topology collector: what one scan read, as plain
// strings (RawTopology), and BuildTopology(), which turns it into a
// model::Topology (name parsing, joins, sorting, error accumulation). The
// scan (the sysfs walk of nvme_topology_collector.cc) is the
// only part that needs the real /sys; the builder runs on hand-made input.
#ifndef PATHWISE_COLLECTORS_TOPOLOGY_BUILDER_H_
#define PATHWISE_COLLECTORS_TOPOLOGY_BUILDER_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/topology.h"

namespace pathwise::collectors {

// A sysfs attribute as read: its trimmed content, or why it could not be
// read (the status names the attribute).
using RawAttr = absl::StatusOr<std::string>;

// A diag/ counter as read: nullopt when the kernel has no such attribute
// (which is no error: most kernels have none), else the attribute as read.
using RawCounter = std::optional<RawAttr>;

// The diag/ attribute groups (see model::PathDiag and its siblings).
struct RawPathDiag {
  RawCounter failovers, command_retries, command_errors;
  // The name command_retries was read under: the kernel's
  // command_retries_count, or command_retry_count as libnvme spells it.
  std::string command_retries_attr = "command_retries_count";
};
struct RawHeadDiag {
  RawCounter requeued_no_usable_path, failed_no_available_path;
};
struct RawControllerDiag {
  RawCounter command_errors, resets, reconnects;
};

struct RawSubsystem {
  std::string name;  // kernel name, nvme-subsys<N>
  std::string nqn;   // "" if there was none
  RawAttr iopolicy = std::string();
  RawAttr model = std::string();
  RawAttr serial = std::string();
};

struct RawController {
  std::string name;       // nvme<N>
  std::string subsystem;  // the kernel name of its subsystem
  // Attributes; nullopt when missing, unreadable or empty.
  std::optional<std::string> transport, address, state, numa_node, queue_count;
  std::string traddr, trsvcid, host_traddr, host_iface;  // "" if none
  RawAttr cntlid = std::string();                        // sysfs
  RawControllerDiag diag;                                // sysfs
};

struct RawPath {
  std::string name;                      // nvme<S>c<C>n<N>
  std::string controller;                // the controller it was found under
  std::optional<std::string> ana_state;  // nullopt when unreadable
  // block/<name>/dev; nullopt when there is no such attribute, which is
  // normal since Linux 5.15 (hidden disks get no dev_t in sysfs).
  std::optional<RawAttr> dev;
  RawPathDiag diag;  // block/<name>/diag/
};

// A head's own attributes, read from block/<name>/.
struct RawHead {
  RawAttr nsid = std::string();
  RawAttr dev = std::string();
  RawHeadDiag diag;  // block/<name>/diag/
};

struct RawTopology {
  // Failures of the scan itself (a controller in no subsystem),
  // reported before the builder's own.
  std::vector<absl::Status> scan_errors;
  // In scan order. A subsystem name that repeats counts once, the first.
  std::vector<RawSubsystem> subsystems;
  std::vector<RawController> controllers;
  std::vector<RawPath> paths;
  // By head name (HeadNameOfPath of some path).
  std::map<std::string, RawHead> heads;
};

struct BuiltTopology {
  model::Topology topology;
  // OK, or the first problem found plus how many more (see ErrorList).
  absl::Status status;
};

// Parses and joins `raw`. Attributes that cannot be read or parsed are left
// empty with an error; a path whose name cannot be placed under a head is
// left out with an error; a path whose controller is not in `raw` (it
// vanished between the walk and the reads) is left out silently, as the
// controller itself is gone.
BuiltTopology BuildTopology(const RawTopology& raw);

// "nvme0c1n1" -> "nvme0n1"; InvalidArgument if `path` is not nvme<S>c<C>n<N>.
absl::StatusOr<std::string> HeadNameOfPath(absl::string_view path);

// "259:3" -> {259, 3}.
absl::StatusOr<model::DevId> ParseDevId(absl::string_view text);

}  // namespace pathwise::collectors

#endif  // PATHWISE_COLLECTORS_TOPOLOGY_BUILDER_H_

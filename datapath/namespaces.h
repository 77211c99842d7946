// SPDX-License-Identifier: Apache-2.0
// Finding the paths of one logical namespace when the kernel does no
// multipathing (nvme_core.multipath=N): every controller then has its own
// namespace node nvmeXnY and generic char device /dev/ngXnY (X the
// controller's instance, Y the namespace's), and the per-controller
// namespaces of one logical namespace are told apart only by their
// identity (NGUID, EUI-64, UUID, or the kernel's wwid built from them) and
// their subsystem's NQN.
//
// The grouping is pure (GroupNamespaces over records); ReadNamespacePaths
// fills the records from a sysfs tree.
#ifndef PATHWISE_DATAPATH_NAMESPACES_H_
#define PATHWISE_DATAPATH_NAMESPACES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace pathwise::datapath {

// One controller's node of a namespace, as sysfs shows it.
struct NamespacePath {
  std::string name;        // nvme1n1
  std::string generic;     // ng1n1 (its /dev node's name)
  std::string controller;  // nvme1
  int controller_instance = -1;
  int numa_node = -1;
  std::string controller_state;  // live, connecting, ...
  std::string subsysnqn;
  // Identity attributes; empty where sysfs has none (the kernel hides the
  // ones the controller did not report).
  std::string wwid, nguid, eui, uuid;
  uint32_t nsid = 0;
  uint64_t size_sectors = 0;  // 512-byte sectors
  uint32_t logical_block_size = 512;
  uint32_t physical_block_size = 512;
  uint32_t max_hw_sectors_kb = 0;  // the largest command (MDTS and driver)
  uint32_t max_segments = 0;
  uint64_t discard_max_hw_bytes = 0;    // 0: no Deallocate
  uint64_t write_zeroes_max_bytes = 0;  // 0: no Write Zeroes
  bool volatile_cache = false;          // queue/write_cache "write back"
  bool fua = false;
};

// One logical namespace and its paths (ordered by controller instance).
struct NamespaceGroup {
  // The identity every path shares: "nguid.<hex>", "eui.<hex>",
  // "uuid.<uuid>", or the kernel's wwid.
  std::string id;
  std::string subsysnqn;
  std::vector<NamespacePath> paths;
};

// The identity of one path's namespace: its NGUID, else EUI-64, else UUID
// (each as the kernel's wwid would spell it), else its wwid; empty when it
// has none.
std::string NamespaceIdentity(const NamespacePath& path);

// Groups `paths` by (subsystem NQN, identity); paths without an identity
// are left out. Groups ordered by their first controller instance.
std::vector<NamespaceGroup> GroupNamespaces(std::vector<NamespacePath> paths);

// Picks the group `spec` names: "auto" (the only namespace with more than
// one path), an identity as NamespaceIdentity spells it or as bare
// NGUID/EUI/UUID value, or one of its per-controller names (nvme1n1,
// ng1n1). The error message is one line for the user: no such namespace,
// ambiguous auto, one path only.
absl::StatusOr<NamespaceGroup> ResolveNamespace(
    const std::vector<NamespaceGroup>& groups, const std::string& spec);

// Every per-controller namespace node under `sysfs_root` (/sys), from
// class/nvme/*/nvme*n* (multipath off: the controller's own nodes; with
// multipath on the kernel shows nvmeXcYnZ there, which are not read).
absl::StatusOr<std::vector<NamespacePath>> ReadNamespacePaths(
    const std::string& sysfs_root);

// Whether nvme_core's native multipath is on (module/nvme_core/parameters/
// multipath is "Y"); false when the parameter is absent.
bool NativeMultipathOn(const std::string& sysfs_root);

}  // namespace pathwise::datapath

#endif  // PATHWISE_DATAPATH_NAMESPACES_H_

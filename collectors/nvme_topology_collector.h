// SPDX-License-Identifier: Apache-2.0
// NvmeTopologyCollector: scans subsystems, controllers and paths from sysfs
// and fills model::Topology. A collection is a raw scan (the sysfs walk
// below, into topology_builder.h's RawTopology) followed by BuildTopology(),
// which parses and joins what was read.
//
// The walk, all through SysfsReader (so under --path.sysfs):
//   - controllers: the nvme<N> entries of class/nvme, each with transport,
//     address (split into traddr, trsvcid, host_traddr, host_iface as the
//     kernel writes it for fabrics), state, cntlid, numa_node, queue_count
//     and its diag/ counters;
//   - subsystems: each controller's is the class/nvme-subsystem entry that
//     lists it; NQN, iopolicy, model and serial from its directory;
//   - paths: the nvme<S>c<C>n<N> entries of a controller's directory, with
//     their ana_state, `dev` where the kernel has one, and diag/ counters;
//   - heads: named by the kernel's rule (path nvme<S>c<C>n<N> belongs to
//     head nvme<S>n<N>), their nsid, dev and diag/ from block/nvme<S>n<N>/.
//
// Not libnvme's tree (nvme_scan_ctrl): the libnvme 1.3 that Debian 12 ships
// frees an uninitialised pointer when a controller's directory vanishes
// while it is being scanned (nvme_ctrl_scan_namespaces ignores scandir's
// failure), so a disconnect racing a collection aborted the process. It also
// reads attributes we do not use and may send Identify Namespace to
// non-multipath namespaces. The walk here leaves out whatever vanished
// between listing and reading: it is gone, not an error.
#ifndef PATHWISE_COLLECTORS_NVME_TOPOLOGY_COLLECTOR_H_
#define PATHWISE_COLLECTORS_NVME_TOPOLOGY_COLLECTOR_H_

#include <string_view>

#include "absl/strings/string_view.h"
#include "collectors/collector.h"
#include "collectors/sysfs_reader.h"
#include "collectors/topology_builder.h"  // HeadNameOfPath, ParseDevId

namespace pathwise::collectors {

class NvmeTopologyCollector : public TopologySource {
 public:
  explicit NvmeTopologyCollector(SysfsReader reader)
      : reader_(std::move(reader)) {}

  absl::string_view name() const override { return "nvme_topology"; }
  absl::Status Read(model::Topology& topology) override;

 private:
  SysfsReader reader_;
};

}  // namespace pathwise::collectors

#endif  // PATHWISE_COLLECTORS_NVME_TOPOLOGY_COLLECTOR_H_

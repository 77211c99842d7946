// SPDX-License-Identifier: Apache-2.0
// NvmeTopologyCollector: scans subsystems, controllers and paths with libnvme
// and fills model::Topology. A collection is a raw scan (the libnvme tree
// walk and the sysfs reads below, into topology_builder.h's RawTopology)
// followed by BuildTopology(), which parses and joins what was read.
//
// What comes from libnvme 1.3: controllers (transport, address, traddr,
// trsvcid, host_traddr, host_iface, state, numa_node, queue_count), their
// subsystem (name, NQN) and their paths (name, ANA state).
//
// What comes from sysfs through SysfsReader, because libnvme 1.3 lacks it:
//   - subsystem iopolicy, model and serial (1.3 has no getters for them);
//   - controller cntlid;
//   - the kernel's diag/ counters of paths, heads and controllers, where the
//     running kernel has them (model::PathDiag and its siblings);
//   - path and head major:minor (`dev`), head nsid;
//   - the heads themselves. libnvme 1.3 builds a namespace (head) object only
//     by opening /dev/nvmeXnY and sending Identify Namespace
//     (nvme_ns_init → nvme_ns_identify). We do not want an admin command per
//     head per interval, a dependency on /dev access, or heads that vanish
//     when no path can carry the command. So the scan calls
//     nvme_scan_ctrls() + nvme_scan_ctrl() (sysfs only) instead of
//     nvme_scan_topology(), and a path's head is named by the kernel's rule
//     that libnvme itself uses to attach paths to namespaces:
//     path nvme<S>c<C>n<N> belongs to head nvme<S>n<N>; the head's own
//     attributes are then read from /sys/block/nvme<S>n<N>/.
//
// libnvme reads the fixed path /sys. When the agent is given another
// --path.sysfs, it first binds that root over /sys in a private mount
// namespace (see sysfs_namespace.h), so libnvme and SysfsReader always see
// the same tree.
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

// SPDX-License-Identifier: Apache-2.0
// Reads what the queue map joins (collectors/queue_map.h): the NVMe/TCP
// controllers and their hardware contexts from sysfs, every established TCP
// socket with its tcp_info from sock_diag, the interfaces' addresses, the
// network devices' queues and XPS/RPS masks from sysfs and their channel
// counts (SIOCETHTOOL), and the IRQs with their affinities from procfs. The BPF
// part, if any, is added by the caller (RawQueueScan::bpf).
#ifndef PATHWISE_COLLECTORS_QUEUE_SCAN_H_
#define PATHWISE_COLLECTORS_QUEUE_SCAN_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collectors/queue_map.h"
#include "collectors/sysfs_reader.h"

namespace pathwise::collectors {

// The channel counts of the network device named `ifname` in this
// network namespace: ETHTOOL_GCHANNELS through the SIOCETHTOOL ioctl, what
// `ethtool -l` shows, without the ethtool binary. Unimplemented when the
// driver reports no channels (lo; veth before 5.6), NotFound when there is
// no such device, InvalidArgument for a name no device can have.
absl::StatusOr<model::NicChannels> ReadNicChannels(const std::string& ifname);

struct QueueScanRoots {
  std::string sysfs = "/sys";
  std::string procfs = "/proc";
  // Asked for each device's channels: the live kernel's by default, which
  // a scan of a copied tree (whose devices are not this host's) replaces.
  std::function<absl::StatusOr<model::NicChannels>(const std::string&)>
      channels = ReadNicChannels;
};

// Every part that cannot be read is left empty with the reason in the
// scan (sockets_error) or in the joined map; only a missing
// /sys/class/nvme is no error (no controllers).
RawQueueScan ScanQueues(const QueueScanRoots& roots);

// Every established TCP socket of this network namespace, with tcp_info
// (sock_diag, NETLINK_SOCK_DIAG; IPv4 and IPv6).
absl::StatusOr<std::vector<model::TcpSocket>> DumpTcpSockets();

}  // namespace pathwise::collectors

#endif  // PATHWISE_COLLECTORS_QUEUE_SCAN_H_

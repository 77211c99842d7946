// Reads what the queue map joins (collectors/queue_map.h): the NVMe/TCP
// controllers and their hardware contexts from sysfs, every established TCP
// socket with its tcp_info from sock_diag, the interfaces' addresses, the
// network devices' queues and XPS/RPS masks from sysfs, and the IRQs with
// their affinities from procfs. The BPF part, if any, is added by the
// caller (RawQueueScan::bpf).
#ifndef PATHWISE_COLLECTORS_QUEUE_SCAN_H_
#define PATHWISE_COLLECTORS_QUEUE_SCAN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collectors/queue_map.h"
#include "collectors/sysfs_reader.h"

namespace pathwise::collectors {

struct QueueScanRoots {
  std::string sysfs = "/sys";
  std::string procfs = "/proc";
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

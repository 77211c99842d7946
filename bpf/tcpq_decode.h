// SPDX-License-Identifier: Apache-2.0
// Decodes the NVMe/TCP queue iterator's output (struct pw_tcpq_rec,
// bpf/pathwise_tcpq.h) into typed records. Pure: no libbpf, fuzzed.
#ifndef PATHWISE_BPF_TCPQ_DECODE_H_
#define PATHWISE_BPF_TCPQ_DECODE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace pathwise::bpf {

// The queue behind one nvme_tcp socket.
struct TcpQueueRecord {
  std::string local_addr;  // numeric (inet_ntop)
  uint16_t local_port = 0;
  std::string remote_addr;
  uint16_t remote_port = 0;
  int ctrl_instance = 0;
  int qid = 0;
  std::optional<int> io_cpu;    // nullopt: unbound (wq_unbound)
  std::optional<int> tx_queue;  // nullopt: not recorded on the socket
  std::optional<int> rx_queue;
};

// `bytes` is the iterator's whole output: a whole number of records.
// `cpu_limit` bounds a bound io_cpu (nr_cpu_ids; the kernel writes
// WORK_CPU_UNBOUND == NR_CPUS for an unbound queue). InvalidArgument for a
// partial record or an address family other than IPv4/IPv6.
absl::StatusOr<std::vector<TcpQueueRecord>> DecodeTcpQueueRecords(
    absl::Span<const uint8_t> bytes, int cpu_limit);

}  // namespace pathwise::bpf

#endif  // PATHWISE_BPF_TCPQ_DECODE_H_

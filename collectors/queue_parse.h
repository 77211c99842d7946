// SPDX-License-Identifier: Apache-2.0
// Pure parsers of what the queue map reads from the kernel: CPU lists and
// masks (sysfs), /proc/interrupts, an NVMe fabrics controller's `address`,
// sock_diag's TCP dump, and the names drivers give their queue IRQs. No
// I/O here: collectors/queue_scan.h reads, these parse (and are fuzzed).
#ifndef PATHWISE_COLLECTORS_QUEUE_PARSE_H_
#define PATHWISE_COLLECTORS_QUEUE_PARSE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "model/queues.h"

namespace pathwise::collectors {

// The highest CPU number a list or mask may name: a guard against a
// hostile "0-4000000000", far above any real NR_CPUS (8192).
inline constexpr int kMaxCpu = 65535;

// A CPU list as sysfs writes it: "0-3,8,10-11" (smp_affinity_list, cpu
// online), "0, 1" (blk-mq cpu_list); "" is the empty set.
absl::StatusOr<model::CpuSet> ParseCpuList(absl::string_view text);

// A CPU mask as sysfs writes it: hex, 32-bit groups separated by commas,
// most significant first ("00000000,0000000f" is CPUs 0-3).
absl::StatusOr<model::CpuSet> ParseCpuMask(absl::string_view text);

// /proc/interrupts: the numbered lines (not NMI, LOC, ...), with their
// per-CPU counts and the action names (after the chip and hardware IRQ
// columns, e.g. "virtio0-input.0" or "mlx5_comp3@pci:0000:3b:00.0").
// Affinities are left empty. InvalidArgument without the CPU header.
absl::StatusOr<std::vector<model::Irq>> ParseInterrupts(absl::string_view text);

// An NVMe fabrics controller's sysfs `address`:
// "traddr=10.0.0.2,trsvcid=4420,src_addr=10.0.0.1" (keys the kernel may
// add: host_traddr, host_iface). Addresses are normalised through
// inet_pton/inet_ntop so that they compare equal to sock_diag's.
struct FabricsAddress {
  std::string traddr;
  std::string trsvcid;
  std::string src_addr;
  std::string host_traddr;
  std::string host_iface;
};
FabricsAddress ParseFabricsAddress(absl::string_view text);

// The numeric form of an IPv4 or IPv6 address, or "" if `text` is not one.
std::string NormalizeAddress(absl::string_view text);

// One sock_diag (NETLINK_SOCK_DIAG, inet_diag) reply buffer: every
// inet_diag_msg of it as a socket, with struct tcp_info when the message
// carries INET_DIAG_INFO. `done` is set at NLMSG_DONE. An NLMSG_ERROR
// message is an error with its errno; a truncated message is
// InvalidArgument.
struct InetDiagBatch {
  std::vector<model::TcpSocket> sockets;
  bool done = false;
};
absl::StatusOr<InetDiagBatch> ParseInetDiag(absl::Span<const uint8_t> buf);

// What a queue IRQ's name says: which queue of which kind.
enum class IrqQueueKind { kRx, kTx, kCombined };
struct IrqQueue {
  IrqQueueKind kind = IrqQueueKind::kCombined;
  int index = 0;
};

// The queue an IRQ serves, from its name, for the network device `ifname`
// whose parent device is `bus_device` (the basename of
// /sys/class/net/IF/device: "virtio0", "0000:3b:00.0"). Known schemes:
// virtio-net "virtio0-input.N"/"virtio0-output.N"; mlx5
// "mlx5_compN@pci:BDF"; the Intel and Broadcom drivers' "IF-TxRx-N",
// "IF-rx-N", "IF-tx-N" (ice prefixes "ice-"); "IF-N". nullopt otherwise.
std::optional<IrqQueue> MatchQueueIrq(absl::string_view irq_name,
                                      absl::string_view ifname,
                                      absl::string_view bus_device);

}  // namespace pathwise::collectors

#endif  // PATHWISE_COLLECTORS_QUEUE_PARSE_H_

// SPDX-License-Identifier: Apache-2.0
#include "bpf/tcpq_decode.h"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

extern "C" {
#include "bpf/pathwise_tcpq.h"
}

namespace pathwise::bpf {
namespace {

std::string Address(int family, const uint8_t* raw) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (inet_ntop(family, raw, buf, sizeof(buf)) == nullptr) return "";
  return buf;
}

std::optional<int> Queue(uint16_t q) {
  if (q == PW_NO_QUEUE) return std::nullopt;
  return q;
}

}  // namespace

absl::StatusOr<std::vector<TcpQueueRecord>> DecodeTcpQueueRecords(
    absl::Span<const uint8_t> bytes, int cpu_limit) {
  constexpr size_t kSize = sizeof(pw_tcpq_rec);
  if (bytes.size() % kSize != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "nvme_tcp queue records: ", bytes.size(),
        " bytes is not a whole number of ", kSize, "-byte records"));
  }
  std::vector<TcpQueueRecord> out;
  for (size_t off = 0; off < bytes.size(); off += kSize) {
    pw_tcpq_rec r;
    std::memcpy(&r, bytes.data() + off, kSize);
    if (r.family != AF_INET && r.family != AF_INET6) {
      return absl::InvalidArgumentError(
          absl::StrCat("nvme_tcp queue record ", off / kSize,
                       ": address family ", r.family));
    }
    TcpQueueRecord q;
    q.local_addr = Address(r.family, r.local_addr);
    q.remote_addr = Address(r.family, r.remote_addr);
    q.local_port = r.local_port;
    q.remote_port = r.remote_port;
    q.ctrl_instance = r.ctrl_instance;
    q.qid = r.qid;
    if (r.io_cpu >= 0 && r.io_cpu < cpu_limit) q.io_cpu = r.io_cpu;
    q.tx_queue = Queue(r.tx_queue);
    q.rx_queue = Queue(r.rx_queue);
    out.push_back(std::move(q));
  }
  return out;
}

}  // namespace pathwise::bpf

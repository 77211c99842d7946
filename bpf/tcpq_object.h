// SPDX-License-Identifier: Apache-2.0
// The NVMe/TCP queue iterator (bpf/pathwise_tcpq.bpf.c): for every socket
// an nvme_tcp queue owns, the controller, the qid, the queue's io_work CPU
// and the NIC queues recorded on the socket. Needs the nvme_tcp module's
// BTF (/sys/kernel/btf/nvme_tcp), an iter/tcp capable kernel (5.9+) and
// CAP_BPF/CAP_PERFMON (or root).
#ifndef PATHWISE_BPF_TCPQ_OBJECT_H_
#define PATHWISE_BPF_TCPQ_OBJECT_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "bpf/tcpq_decode.h"

struct pathwise_tcpq;
struct bpf_link;

namespace pathwise::bpf {

class TcpQueueIterator {
 public:
  // FailedPrecondition (with the reason in words) when nvme_tcp is not
  // loaded or has no BTF; other errors when the load or attach fails.
  static absl::StatusOr<std::unique_ptr<TcpQueueIterator>> Load();

  ~TcpQueueIterator();
  TcpQueueIterator(const TcpQueueIterator&) = delete;
  TcpQueueIterator& operator=(const TcpQueueIterator&) = delete;

  // One walk over the TCP sockets of the caller's network namespace.
  absl::StatusOr<std::vector<TcpQueueRecord>> Read() const;

 private:
  TcpQueueIterator(pathwise_tcpq* skel, bpf_link* link)
      : skel_(skel), link_(link) {}

  pathwise_tcpq* skel_;
  bpf_link* link_;
};

}  // namespace pathwise::bpf

#endif  // PATHWISE_BPF_TCPQ_OBJECT_H_

// SPDX-License-Identifier: Apache-2.0
// QueueSource: one reading of the NVMe/TCP queue map. The sysfs, procfs
// and sock_diag scan (collectors/queue_scan.h), plus, when allowed, the
// BPF iterator over nvme_tcp's sockets (bpf/tcpq_object.h) for the qid,
// io_cpu and NIC queues behind each socket; joined
// (collectors/queue_map.h) and checked for mismatches
// (collectors/queue_mismatch.h).
#ifndef PATHWISE_COLLECTORS_QUEUE_SOURCE_H_
#define PATHWISE_COLLECTORS_QUEUE_SOURCE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "bpf/tcpq_decode.h"
#include "collectors/collector.h"
#include "collectors/queue_map.h"
#include "collectors/queue_scan.h"
#include "model/queues.h"

namespace pathwise::bpf {
class TcpQueueIterator;
}

namespace pathwise::collectors {

// The iterator's records in the join's terms.
std::vector<BpfSocketQueue> ToSocketQueues(
    const std::vector<bpf::TcpQueueRecord>& records);

class QueueSource {
 public:
  // `use_bpf` false: the qid, io_cpu and per-flow NIC queues stay unknown
  // ("BPF off").
  QueueSource(QueueScanRoots roots, bool use_bpf);
  ~QueueSource();

  model::QueueMap Collect();

 private:
  QueueScanRoots roots_;
  bool use_bpf_;
  std::unique_ptr<bpf::TcpQueueIterator> iterator_;
  std::string bpf_unknown_;
};

// The queue map as one more I/O source of the pipeline (serve and
// snapshot with --queues): fills IoReading::queues. It never fails a
// collection; what it cannot read is in the map as unknown, with why. The
// per hardware context I/O that the BPF collector (added before it) left
// in IoReading::queues is kept, with each context's CPUs read from
// `sysfs_root`.
class QueueIoSource : public IoSource {
 public:
  explicit QueueIoSource(std::unique_ptr<QueueSource> source,
                         std::string sysfs_root = "/sys")
      : source_(std::move(source)), roots_sysfs_(std::move(sysfs_root)) {}
  absl::string_view name() const override { return "queues"; }
  absl::Status Read(const model::Topology& topology,
                    model::IoReading& io) override;

 private:
  std::unique_ptr<QueueSource> source_;
  std::string roots_sysfs_;
};

}  // namespace pathwise::collectors

#endif  // PATHWISE_COLLECTORS_QUEUE_SOURCE_H_

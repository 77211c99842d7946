// SPDX-License-Identifier: Apache-2.0
#include "collectors/queue_source.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "bpf/tcpq_object.h"
#include "collectors/queue_hctx.h"
#include "collectors/queue_mismatch.h"
#include "collectors/sysfs_reader.h"
#include "spdlog/spdlog.h"

namespace pathwise::collectors {

std::vector<BpfSocketQueue> ToSocketQueues(
    const std::vector<bpf::TcpQueueRecord>& records) {
  std::vector<BpfSocketQueue> out;
  out.reserve(records.size());
  for (const bpf::TcpQueueRecord& r : records) {
    out.push_back({.local_addr = r.local_addr,
                   .local_port = r.local_port,
                   .remote_addr = r.remote_addr,
                   .remote_port = r.remote_port,
                   .ctrl_instance = r.ctrl_instance,
                   .qid = r.qid,
                   .io_cpu = r.io_cpu.value_or(-1),
                   .tx_queue = r.tx_queue,
                   .rx_queue = r.rx_queue});
  }
  return out;
}

QueueSource::QueueSource(QueueScanRoots roots, bool use_bpf)
    : roots_(std::move(roots)), use_bpf_(use_bpf) {
  if (!use_bpf_) bpf_unknown_ = "BPF off";
}

QueueSource::~QueueSource() = default;

model::QueueMap QueueSource::Collect() {
  RawQueueScan raw = ScanQueues(roots_);
  if (use_bpf_ && !raw.controllers.empty()) {
    // Loaded once nvme_tcp is there; retried while it is not.
    if (!iterator_) {
      absl::StatusOr<std::unique_ptr<bpf::TcpQueueIterator>> it =
          bpf::TcpQueueIterator::Load();
      if (it.ok()) {
        iterator_ = *std::move(it);
        bpf_unknown_.clear();
      } else {
        bpf_unknown_ = std::string(it.status().message());
        spdlog::debug("nvme_tcp queue iterator: {}", bpf_unknown_);
      }
    }
    if (iterator_) {
      absl::StatusOr<std::vector<bpf::TcpQueueRecord>> recs = iterator_->Read();
      if (recs.ok()) {
        raw.bpf = ToSocketQueues(*recs);
      } else {
        bpf_unknown_ = std::string(recs.status().message());
      }
    }
  }
  raw.bpf_unknown = raw.bpf ? "" : bpf_unknown_;
  model::QueueMap m = BuildQueueMap(raw);
  m.mismatches = FindMismatches(m);
  return m;
}

absl::Status QueueIoSource::Read(const model::Topology&, model::IoReading& io) {
  model::QueueMap m = source_->Collect();
  // The per hardware context I/O, when the BPF sampler counted it this
  // collection (it runs first).
  if (io.queues && io.queues->hctx_io) {
    MoveHctxIo(*io.queues, m);
    AddHctxCpus(SysfsReader(roots_sysfs_), m.path_hctx);
  } else {
    m.hctx_io_unknown =
        "needs the eBPF sampler (--bpf=off, or it is unavailable)";
  }
  io.queues = std::move(m);
  return absl::OkStatus();
}

}  // namespace pathwise::collectors

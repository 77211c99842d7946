// SPDX-License-Identifier: Apache-2.0
#include "model/synthetic.h"

#include <cmath>
#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace pathwise::model {
namespace {

// Latencies around a median of 80 us << controller for reads, 4x that for
// writes and flushes, in 41 quarter-octave steps over a factor 32 each way
// (~40 populated kernel buckets); discards see none.
void AddSyntheticBpf(uint64_t k, int controller, IoStats& io) {
  for (Op o : {Op::kRead, Op::kWrite, Op::kDiscard, Op::kFlush}) {
    OpStats& op = *io.op(o);
    op.errors = o == Op::kWrite ? k % 3 : 0;
    LatencyHistogram h;
    if (o == Op::kDiscard) {
      op.completed = op.bytes = op.time_ns = 0;
      op.latency = h;
      continue;
    }
    const uint64_t median_ns = (o == Op::kRead ? 80000u : 320000u)
                               << controller;
    uint64_t left = op.completed, sum = 0;
    for (int step = -20; step <= 20 && left > 0; ++step) {
      const double ns = static_cast<double>(median_ns) * std::exp2(step / 4.0);
      // A triangle around the median: 21 - |step| parts in 441.
      uint64_t n =
          op.completed * static_cast<uint64_t>(21 - std::abs(step)) / 441;
      if (step == 20 || n > left) n = left;
      h.Observe(static_cast<uint64_t>(ns), n);
      sum += static_cast<uint64_t>(ns) * n;
      left -= n;
    }
    op.time_ns = sum;
    op.latency = h;
  }
}

}  // namespace

Snapshot MakeSyntheticSnapshot(const SyntheticShape& shape) {
  Snapshot snap;
  Topology& t = snap.topology;
  int ctrl_instance = 0;
  uint32_t minor = 0;
  for (int s = 0; s < shape.subsystems; ++s) {
    const std::string sub = absl::StrCat("nvme-subsys", s);
    t.subsystems.push_back(
        Subsystem{sub, absl::StrCat("nqn.2024-01.io.pathwise:synthetic-", s),
                  s % 2 == 0 ? Iopolicy::kRoundRobin : Iopolicy::kNuma, "",
                  "pathwise synthetic", absl::StrCat("SYN", 1000 + s)});
    std::vector<std::string> ctrls;
    for (int c = 0; c < shape.controllers_per_subsystem; ++c) {
      Controller ctrl;
      ctrl.name = absl::StrCat("nvme", ctrl_instance++);
      ctrl.subsystem = sub;
      ctrl.transport = "tcp";
      ctrl.traddr = absl::StrCat("10.", s, ".", c, ".1");
      ctrl.trsvcid = "4420";
      ctrl.address = absl::StrCat("traddr=", ctrl.traddr, ",trsvcid=4420");
      ctrl.state = c == 1 && s % 3 == 2 ? ControllerState::kConnecting
                                        : ControllerState::kLive;
      ctrl.cntlid = absl::StrCat(c + 1);
      ctrl.numa_node = c % 2;
      ctrl.io_queues = 4;
      ctrls.push_back(ctrl.name);
      t.controllers.push_back(std::move(ctrl));
    }
    for (int h = 0; h < shape.heads_per_subsystem; ++h) {
      Head head;
      head.name = absl::StrCat("nvme", s, "n", h + 1);
      head.subsystem = sub;
      head.nsid = static_cast<uint32_t>(h + 1);
      head.dev = DevId{259, minor++};
      IoStats head_io;
      for (int c = 0; c < shape.controllers_per_subsystem; ++c) {
        Path p;
        p.name = absl::StrCat("nvme", s, "c", ctrls[c].substr(4), "n", h + 1);
        p.subsystem = sub;
        p.head = head.name;
        p.controller = ctrls[c];
        p.dev = DevId{259, minor++};
        p.ana_state = c == 0 ? AnaState::kOptimized : AnaState::kNonOptimized;
        p.numa_node = c % 2;
        IoStats io;
        const uint64_t k = 1000u * (s + 1) + 100u * (h + 1) + (c + 1);
        io.op(Op::kRead) = OpStats{k * 10, k * 40960, k * 1000000};
        io.op(Op::kWrite) = OpStats{k * 5, k * 20480, k * 2000000};
        io.op(Op::kDiscard) = OpStats{k, k * 1048576, k * 500000};
        io.op(Op::kFlush) = OpStats{k / 2, 0, k * 100000};
        io.inflight = k % 7;
        if (shape.bpf) AddSyntheticBpf(k, c, io);
        for (int o = 0; o < kOpCount; ++o) {
          if (!io.ops[o]) continue;
          OpStats& acc =
              head_io.ops[o].emplace(head_io.ops[o].value_or(OpStats{}));
          acc.Merge(*io.ops[o]);
        }
        head_io.inflight = head_io.inflight.value_or(0) + *io.inflight;
        if (shape.bpf) io.inflight.reset();  // sysfs only
        snap.path_io[p.name] = io;
        t.paths.push_back(std::move(p));
      }
      snap.head_io[head.name] = head_io;
      t.heads.push_back(std::move(head));
    }
  }
  t.Sort();
  snap.io_source = shape.bpf ? IoSource::kBpf : IoSource::kSysfs;
  snap.collectors = {{"nvme_topology", 0, true, ""},
                     {"nvme_iostats", 0, true, ""}};
  snap.generation = 1;
  return snap;
}

}  // namespace pathwise::model

// SPDX-License-Identifier: Apache-2.0
// Fuzzes the decoding of the BPF sampler's map contents on the userspace
// side: a SamplerSnapshot as BlockObject/NvmeObject build it from raw map
// values (disk names from the kernel's fixed 32-byte gendisk.disk_name
// buffer, any dev_t, any counter and histogram bucket values), joined with a
// topology built from a generated raw scan (JoinBpfSamples), plus the pure
// status and op classifiers the kernel side shares.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <string>

#include "bpf/sampler.h"
#include "bpf/status.h"
#include "collectors/bpf_io_collector.h"
#include "collectors/collector.h"
#include "collectors/topology_builder.h"
#include "model/types.h"
#include "tests/fuzz/raw_topology.h"

namespace {

namespace model = pathwise::model;
namespace bpf = pathwise::bpf;

// A disk name as the kernel side records it (a NUL-padded char[32], maybe
// without a NUL), read back as block_object.cc does.
std::string DiskName(FuzzedDataProvider& in) {
  if (in.ConsumeBool()) return pathwise::fuzz::PathName(in);
  char name[32];
  const std::string bytes = in.ConsumeBytesAsString(sizeof(name));
  std::memset(name, 0, sizeof(name));
  std::memcpy(name, bytes.data(), bytes.size());
  return std::string(name, strnlen(name, sizeof(name)));
}

model::OpStats Stats(FuzzedDataProvider& in) {
  model::OpStats s;
  s.completed = in.ConsumeIntegral<uint64_t>();
  s.bytes = in.ConsumeIntegral<uint64_t>();
  s.time_ns = in.ConsumeIntegral<uint64_t>();
  if (in.ConsumeBool()) s.errors = in.ConsumeIntegral<uint64_t>();
  if (in.ConsumeBool()) {
    s.latency.emplace();
    const int n = in.ConsumeIntegralInRange<int>(0, 8);
    for (int i = 0; i < n; ++i) {
      s.latency->AddToBucket(in.ConsumeIntegralInRange<size_t>(
                                 0, model::LatencyHistogram::kBuckets - 1),
                             in.ConsumeIntegral<uint64_t>());
    }
  }
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  (void)bpf::ClassifyNvmeStatus(in.ConsumeIntegral<uint16_t>());
  (void)bpf::OpClassForReqOpName(in.ConsumeRandomLengthString(24));

  const pathwise::collectors::BuiltTopology built =
      pathwise::collectors::BuildTopology(
          pathwise::fuzz::ConsumeRawTopology(in));

  bpf::SamplerSnapshot s;
  const int ios = in.ConsumeIntegralInRange<int>(0, 16);
  for (int i = 0; i < ios; ++i) {
    bpf::DeviceIo d;
    d.dev = model::DevId::FromKernel(in.ConsumeIntegral<uint32_t>());
    d.disk = DiskName(in);
    // The kernel's op class slot, bounded as block_object.cc bounds it.
    const uint32_t op = in.ConsumeIntegral<uint32_t>();
    d.op =
        op < model::kOpCount ? static_cast<model::Op>(op) : model::Op::kOther;
    d.stats = Stats(in);
    s.io.push_back(std::move(d));
  }
  const int paths = in.ConsumeIntegralInRange<int>(0, 8);
  for (int i = 0; i < paths; ++i) {
    bpf::PathSample p;
    p.dev = model::DevId::FromKernel(in.ConsumeIntegral<uint32_t>());
    p.disk = DiskName(in);
    p.stats.retries = in.ConsumeIntegral<uint64_t>();
    p.stats.failovers = in.ConsumeIntegral<uint64_t>();
    if (in.ConsumeBool()) {
      p.stats.errors_by_class.emplace();
      for (uint64_t& v : *p.stats.errors_by_class) {
        v = in.ConsumeIntegral<uint64_t>();
      }
    }
    s.paths.push_back(std::move(p));
  }
  for (uint64_t& d : s.dropped) d = in.ConsumeIntegral<uint64_t>();
  s.bpf_stats_enabled = in.ConsumeBool();
  s.nvme_state =
      static_cast<bpf::NvmeAttachState>(in.ConsumeIntegralInRange<int>(0, 3));
  const int programs = in.ConsumeIntegralInRange<int>(0, 3);
  for (int i = 0; i < programs; ++i) {
    s.programs.push_back(
        {in.ConsumeRandomLengthString(16), "tp_btf/x",
         in.ConsumeIntegral<uint32_t>(), in.ConsumeIntegral<uint64_t>(),
         in.ConsumeIntegral<uint64_t>(), in.ConsumeIntegral<uint64_t>()});
  }

  const auto scope = in.ConsumeBool()
                         ? pathwise::collectors::DeviceScope::kAll
                         : pathwise::collectors::DeviceScope::kNvme;
  pathwise::model::IoReading io;
  pathwise::collectors::JoinBpfSamples(s, scope, built.topology, io);

  // Every topology path and head gets read and write series.
  for (const model::Path& p : built.topology.paths) {
    auto it = io.path_io.find(p.name);
    if (it == io.path_io.end() || !it->second.op(model::Op::kRead) ||
        !it->second.op(model::Op::kWrite)) {
      __builtin_trap();
    }
  }
  for (const model::Head& h : built.topology.heads) {
    if (!io.head_io.contains(h.name)) __builtin_trap();
  }
  // A head is the exact merge of its paths (counters wrap like the
  // kernel's), when the topology names each path once, plus the paths it
  // had that have left the topology (sampled under an NVMe path name that
  // no current path has), so that its counters never go backwards.
  std::set<std::string> names;
  bool unique = true;
  for (const model::Path& p : built.topology.paths) {
    unique &= names.insert(p.name).second;
  }
  if (unique) {
    std::map<std::string, uint64_t> head_reads;
    for (const model::Path& p : built.topology.paths) {
      head_reads[p.head] += io.path_io[p.name].op(model::Op::kRead)->completed;
    }
    for (const bpf::DeviceIo& d : s.io) {
      const std::string name = d.disk.empty() ? model::ToString(d.dev) : d.disk;
      if (names.contains(name) || d.op != model::Op::kRead) continue;
      if (const auto path = model::ParseNvmePathName(name)) {
        head_reads[model::HeadName(*path)] += d.stats.completed;
      }
    }
    for (const auto& [head, reads] : head_reads) {
      auto it = io.head_io.find(head);
      if (it != io.head_io.end() &&
          it->second.op(model::Op::kRead)->completed != reads) {
        __builtin_trap();
      }
    }
  }
  return 0;
}

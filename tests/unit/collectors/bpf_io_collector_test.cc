// SPDX-License-Identifier: Apache-2.0
// The BPF collector's glue (collectors/bpf_io_collector.h), without BPF:
// the join of sampler output with the topology by disk name, head
// attribution as the exact merge of a head's paths, --devices scoping,
// NVMe status classes and the Prometheus rendering (golden bpf.prom).
#include "collectors/bpf_io_collector.h"

#include <string>

#include "exporters/prometheus_families.h"
#include "gtest/gtest.h"
#include "model/synthetic.h"
#include "tests/unit/golden.h"

namespace pathwise::collectors {
namespace {

using bpf::DeviceIo;
using bpf::SamplerSnapshot;

// One subsystem, head nvme0n1, paths nvme0c0n1 (ctrl nvme0) and nvme0c1n1.
model::Snapshot Topology() {
  model::Snapshot s = model::MakeSyntheticSnapshot({1, 1, 2});
  s.path_io.clear();
  s.head_io.clear();
  s.io_source = model::IoSource::kNone;
  s.collectors = {{"nvme_topology", 0, true, ""}, {"bpf_io", 0, true, ""}};
  return s;
}

// Joins into `snap` as the pipeline does: the I/O part, then into the
// snapshot.
void JoinBpfSamples(const SamplerSnapshot& samples, DeviceScope scope,
                    model::Snapshot& snap) {
  model::IoReading io;
  collectors::JoinBpfSamples(samples, scope, snap.topology, io);
  static_cast<model::IoReading&>(snap) = std::move(io);
}

DeviceIo Io(uint32_t minor, std::string disk, bpf::Op op,
            std::initializer_list<uint64_t> latencies_ns, uint64_t bytes_each,
            uint64_t errors = 0) {
  DeviceIo d;
  d.dev = {259, minor};
  d.disk = std::move(disk);
  d.op = op;
  for (uint64_t ns : latencies_ns) {
    d.stats.completed++;
    d.stats.bytes += bytes_each;
    d.stats.time_ns += ns;
    if (!d.stats.latency) d.stats.latency.emplace();
    d.stats.latency->Observe(ns);
  }
  d.stats.errors = errors;
  return d;
}

SamplerSnapshot Samples() {
  SamplerSnapshot s;
  // Path 0 slow (30 ms), path 1 fast (100 us); one passthru read on path 0.
  s.io.push_back(Io(0, "nvme0c0n1", bpf::Op::kRead,
                    {30'000'000, 31'000'000, 32'000'000}, 4096, 1));
  s.io.push_back(Io(0, "nvme0c0n1", bpf::Op::kPassthru, {50'000}, 4096));
  s.io.push_back(
      Io(1, "nvme0c1n1", bpf::Op::kRead, {100'000, 120'000}, 4096, 2));
  s.io.push_back(Io(1, "nvme0c1n1", bpf::Op::kWrite, {200'000}, 8192));
  // The same path under an older dev_t (deleted and re-created): summed.
  s.io.push_back(Io(7, "nvme0c1n1", bpf::Op::kRead, {1'000}, 4096));
  // Not NVMe topology: a loop device, a vanished path, a head-named disk.
  DeviceIo loop = Io(0, "loop0", bpf::Op::kWrite, {5'000, 6'000}, 4096, 1);
  loop.dev = {7, 0};
  s.io.push_back(loop);
  s.io.push_back(Io(9, "nvme3c3n1", bpf::Op::kRead, {1'000}, 512));
  s.io.push_back(Io(10, "nvme0n1", bpf::Op::kRead, {1'000}, 512));
  bpf::PathSample p0;
  p0.dev = {259, 0};
  p0.disk = "nvme0c0n1";
  p0.stats.failovers = 3;
  p0.stats.retries = 2;
  p0.stats.errors_by_class.emplace();
  (*p0.stats.errors_by_class)[3] = 4;  // path (SCT 3)
  (*p0.stats.errors_by_class)[2] = 1;  // media
  s.paths.push_back(p0);
  s.dropped[model::Index(model::DropReason::kNoStartTime)] = 5;
  s.nvme_state = bpf::NvmeAttachState::kAttached;
  s.bpf_stats_enabled = true;
  s.programs.push_back(
      {"pw_done_btf", "tp_btf/block_rq_complete", 1, 1500, 10, 0});
  return s;
}

TEST(BpfJoinTest, PathsByNameHeadIsExactMergeOfItsPaths) {
  model::Snapshot snap = Topology();
  JoinBpfSamples(Samples(), DeviceScope::kNvme, snap);
  EXPECT_EQ(snap.io_source, model::IoSource::kBpf);

  const model::IoStats& p0 = snap.path_io.at("nvme0c0n1");
  const model::IoStats& p1 = snap.path_io.at("nvme0c1n1");
  const model::IoStats& head = snap.head_io.at("nvme0n1");
  EXPECT_EQ(p0.op(model::Op::kRead)->completed, 3u);
  EXPECT_EQ(p1.op(model::Op::kRead)->completed, 3u);  // 2 + 1 (old dev_t)
  EXPECT_EQ(p0.op(model::Op::kPassthru)->completed, 1u);
  EXPECT_FALSE(p1.op(model::Op::kPassthru).has_value());
  // Read and write always present, zero until used.
  EXPECT_EQ(p0.op(model::Op::kWrite)->completed, 0u);
  EXPECT_EQ(p0.op(model::Op::kWrite)->latency->Count(), 0u);

  for (model::Op op :
       {model::Op::kRead, model::Op::kWrite, model::Op::kPassthru}) {
    uint64_t completed = 0, bytes = 0;
    model::LatencyHistogram merged;
    for (const model::IoStats* p : {&p0, &p1}) {
      if (!p->op(op)) continue;
      completed += p->op(op)->completed;
      bytes += p->op(op)->bytes;
      merged.Merge(*p->op(op)->latency);
    }
    ASSERT_TRUE(head.op(op).has_value()) << model::Index(op);
    EXPECT_EQ(head.op(op)->completed, completed) << model::Index(op);
    EXPECT_EQ(head.op(op)->bytes, bytes);
    EXPECT_EQ(*head.op(op)->latency, merged);
    EXPECT_EQ(head.op(op)->latency->Count(), head.op(op)->completed);
  }
  // The head-named disk's own requests are not added to the head.
  EXPECT_EQ(head.op(model::Op::kRead)->completed, 6u);
  // The histogram's sum is the op's summed latency.
  EXPECT_EQ(head.op(model::Op::kRead)->time_ns,
            93'000'000u + 220'000u + 1'000u);
  EXPECT_TRUE(snap.device_io.empty());  // --devices=nvme
}

// A path that left (its controller deleted) keeps counting in its head:
// the head's counters never go backwards while it exists.
TEST(BpfJoinTest, HeadKeepsTheCountsOfAPathThatLeft) {
  model::Snapshot before = Topology();
  JoinBpfSamples(Samples(), DeviceScope::kNvme, before);
  const uint64_t reads =
      before.head_io.at("nvme0n1").op(model::Op::kRead)->completed;

  model::Snapshot after = Topology();
  std::erase_if(after.topology.paths,
                [](const model::Path& p) { return p.name == "nvme0c0n1"; });
  JoinBpfSamples(Samples(), DeviceScope::kNvme, after);
  EXPECT_FALSE(after.path_io.contains("nvme0c0n1"));
  const model::IoStats& head = after.head_io.at("nvme0n1");
  EXPECT_EQ(head.op(model::Op::kRead)->completed, reads);
  EXPECT_EQ(head.op(model::Op::kRead)->latency->Count(), reads);
  EXPECT_EQ(head.op(model::Op::kPassthru)->completed, 1u);
}

TEST(BpfJoinTest, DevicesAllAddsOtherDisksOnly) {
  model::Snapshot snap = Topology();
  JoinBpfSamples(Samples(), DeviceScope::kAll, snap);
  ASSERT_EQ(snap.device_io.size(), 1u);
  const model::IoStats& loop = snap.device_io.at("loop0");
  EXPECT_EQ(loop.op(model::Op::kWrite)->completed, 2u);
  EXPECT_EQ(loop.op(model::Op::kWrite)->bytes, 8192u);
  EXPECT_EQ(*loop.op(model::Op::kWrite)->errors, 1u);
  EXPECT_EQ(loop.op(model::Op::kRead)->completed, 0u);
}

TEST(BpfJoinTest, NvmeStatusClassesRetriesFailoversPerPath) {
  model::Snapshot snap = Topology();
  JoinBpfSamples(Samples(), DeviceScope::kNvme, snap);
  const model::PathNvmeStats& p0 = snap.path_nvme.at("nvme0c0n1");
  EXPECT_EQ(p0.failovers, 3u);
  EXPECT_EQ(p0.retries, 2u);
  using C = model::NvmeStatusClass;
  ASSERT_TRUE(p0.errors_by_class.has_value());
  std::array<uint64_t, model::kNvmeErrorClassCount> want{};
  want[model::ErrorClassIndex(C::kMedia)] = 1;
  want[model::ErrorClassIndex(C::kPath)] = 4;
  EXPECT_EQ(*p0.errors_by_class, want);
  const model::PathNvmeStats& p1 = snap.path_nvme.at("nvme0c1n1");
  EXPECT_EQ(p1.failovers, 0u);
  EXPECT_EQ(p1.errors_by_class,
            (std::array<uint64_t, model::kNvmeErrorClassCount>{}));

  // Without the nvme_complete_rq program: no status classes, failovers
  // (from the block program) still there.
  SamplerSnapshot s = Samples();
  s.nvme_state = bpf::NvmeAttachState::kNotLoaded;
  model::Snapshot snap2 = Topology();
  JoinBpfSamples(s, DeviceScope::kNvme, snap2);
  EXPECT_FALSE(snap2.path_nvme.at("nvme0c0n1").errors_by_class.has_value());
  EXPECT_EQ(snap2.path_nvme.at("nvme0c0n1").failovers, 3u);
}

TEST(BpfJoinTest, StatusClassOfPathErrors) {
  // Host path error (NVME_SC_HOST_PATH_ERROR 0x370) and ANA inaccessible
  // (0x302) are path errors; 0x281 (unrecovered read) is media.
  EXPECT_EQ(bpf::ClassifyNvmeStatus(0x370), bpf::NvmeStatusClass::kPath);
  EXPECT_EQ(bpf::ClassifyNvmeStatus(0x302), bpf::NvmeStatusClass::kPath);
  EXPECT_EQ(bpf::ClassifyNvmeStatus(0x281), bpf::NvmeStatusClass::kMedia);
  EXPECT_EQ(bpf::ClassifyNvmeStatus(0), bpf::NvmeStatusClass::kSuccess);
}

TEST(BpfJoinTest, PathDiskNames) {
  EXPECT_TRUE(IsNvmePathDiskName("nvme0c1n1"));
  EXPECT_TRUE(IsNvmePathDiskName("nvme12c3n45"));
  EXPECT_FALSE(IsNvmePathDiskName("nvme0n1"));
  EXPECT_FALSE(IsNvmePathDiskName("nvme0c1n1p1"));
  EXPECT_FALSE(IsNvmePathDiskName("loop0"));
  EXPECT_FALSE(IsNvmePathDiskName("nvmec1n1"));
}

TEST(BpfJoinTest, ExpositionGolden) {
  model::Snapshot snap = Topology();
  JoinBpfSamples(Samples(), DeviceScope::kAll, snap);
  const std::string text = exporters::SerializeText(
      exporters::BuildFamilies(&snap, {"0.0.0-test", "golden"}));
  pathwise::testing::ExpectMatchesGolden(text, "bpf.prom");
  pathwise::testing::ExpectMatchesGolden(
      exporters::SerializeText(exporters::BuildFamilies(
          &snap, {"0.0.0-test", "golden"},
          {.histogram_buckets = exporters::HistogramBuckets::kSparse,
           .profile = exporters::MetricsProfile::kDefault})),
      "bpf.default.prom");
  // Each histogram has exactly one +Inf bucket equal to its count.
  EXPECT_NE(text.find("pathwise_head_io_latency_seconds_bucket{subsystem="
                      "\"nvme-subsys0\",head=\"nvme0n1\",op=\"read\",le="
                      "\"+Inf\"} 6\n"),
            std::string::npos);
  EXPECT_NE(text.find("pathwise_sampler_info{source=\"bpf\"} 1"),
            std::string::npos);
  // Block-layer errors by op for paths and heads alike, the head's the sum
  // of its paths'; NVMe status classes under their own name.
  EXPECT_NE(
      text.find("pathwise_path_io_errors_total{subsystem=\"nvme-subsys0\","
                "head=\"nvme0n1\",path=\"nvme0c1n1\",controller=\"nvme1\","
                "op=\"read\"} 2\n"),
      std::string::npos);
  EXPECT_NE(
      text.find("pathwise_head_io_errors_total{subsystem=\"nvme-subsys0\","
                "head=\"nvme0n1\",op=\"read\"} 3\n"),
      std::string::npos);
  EXPECT_NE(
      text.find("pathwise_path_nvme_errors_total{subsystem=\"nvme-subsys0\","
                "head=\"nvme0n1\",path=\"nvme0c0n1\",controller=\"nvme0\","
                "status_class=\"path\"} 4\n"),
      std::string::npos);
}

}  // namespace
}  // namespace pathwise::collectors

namespace pathwise::collectors {
namespace {

// A path disk created on the dev_t another one freed (nvme0c1n1 on the
// departed nvme0c3n1's 259:1): the sampler keys them apart by diskseq, the
// departed one's final counts retired. The new path counts only its own
// I/O; the head keeps both.
TEST(BpfJoinTest, ReusedDevTCountsUnderEachDisksOwnName) {
  model::Snapshot snap = Topology();
  SamplerSnapshot s;
  DeviceIo gone = Io(1, "nvme0c3n1", bpf::Op::kRead, {1'000, 2'000}, 4096);
  gone.diskseq = 5;
  gone.retired = true;
  DeviceIo now = Io(1, "nvme0c1n1", bpf::Op::kRead, {3'000}, 4096);
  now.diskseq = 9;
  s.io = {gone, now};
  JoinBpfSamples(s, DeviceScope::kNvme, snap);
  EXPECT_EQ(snap.path_io.at("nvme0c1n1").op(model::Op::kRead)->completed, 1u);
  EXPECT_FALSE(snap.path_io.contains("nvme0c3n1"));
  EXPECT_EQ(snap.head_io.at("nvme0n1").op(model::Op::kRead)->completed, 3u);
}

}  // namespace
}  // namespace pathwise::collectors

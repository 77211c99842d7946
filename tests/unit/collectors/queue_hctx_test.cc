// SPDX-License-Identifier: Apache-2.0
// The per hardware queue join: the sampler's (disk, hctx) entries into the
// queue map's per-path terms (NVMe disks only, instances of one name
// summed, natural order), the controller behind a disk name, each hardware
// queue's CPUs and the hardware queue count from a sysfs tree the test
// builds.
#include "collectors/queue_hctx.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

namespace pathwise::collectors {
namespace {

bpf::DiskHctxIo Entry(uint32_t dev, uint64_t seq, std::string disk, int hctx,
                      uint64_t count, uint64_t remote) {
  bpf::DiskHctxIo e;
  e.key = {dev, seq};
  e.disk = std::move(disk);
  e.hctx = hctx;
  e.totals.count = count;
  e.totals.lat_sum_ns = count * 1000;
  e.totals.remote = remote;
  e.totals.buckets[0] = count;  // le = 4096 ns
  return e;
}

TEST(NvmeDiskController, FromTheName) {
  EXPECT_EQ(NvmeDiskController("nvme0c1n1"), "nvme1");
  EXPECT_EQ(NvmeDiskController("nvme3c12n2"), "nvme12");
  EXPECT_EQ(NvmeDiskController("nvme2n1"), "nvme2");
  EXPECT_EQ(NvmeDiskController("nvme2n1p1"), "");
  EXPECT_EQ(NvmeDiskController("loop0"), "");
  EXPECT_EQ(NvmeDiskController("nvme0"), "");
  EXPECT_EQ(NvmeDiskController("nvmeXn1"), "");
}

TEST(HctxByPath, NvmeDisksOnlyInstancesSummedNaturalOrder) {
  bpf::SamplerSnapshot s;
  s.hctx_on = true;
  s.hctx = {Entry(7 << 20, 1, "loop0", 0, 50, 0),
            Entry(259 << 20 | 3, 9, "nvme0c10n1", 0, 5, 1),
            Entry(259 << 20 | 1, 4, "nvme0c2n1", 1, 20, 2),
            Entry(259 << 20 | 1, 4, "nvme0c2n1", 0, 10, 0),
            // An older instance of the same name (the path re-created).
            Entry(259 << 20 | 2, 3, "nvme0c2n1", 0, 7, 7),
            Entry(259 << 20 | 4, 5, "", 0, 100, 0)};
  const std::vector<model::PathHctxIo> p = HctxByPath(s);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].path, "nvme0c2n1");
  EXPECT_EQ(p[0].controller, "nvme2");
  ASSERT_EQ(p[0].hctxs.size(), 2u);
  EXPECT_EQ(p[0].hctxs[0].index, 0);
  EXPECT_EQ(p[0].hctxs[0].completed, 17u);
  EXPECT_EQ(p[0].hctxs[0].remote_completions, 7u);
  EXPECT_EQ(p[0].hctxs[0].latency_sum_ns, 17000u);
  EXPECT_EQ(p[0].hctxs[0].latency.Count(), 17u);
  EXPECT_EQ(p[0].hctxs[1].index, 1);
  EXPECT_EQ(p[0].hctxs[1].completed, 20u);
  EXPECT_EQ(p[1].path, "nvme0c10n1");
  EXPECT_EQ(p[1].controller, "nvme10");
}

class SysTree : public ::testing::Test {
 protected:
  void SetUp() override {
    // A directory of its own: ctest runs this fixture's tests in parallel.
    std::string tmpl = ::testing::TempDir() + "/hctx_sys-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    Write("block/nvme0c0n1/mq/0/cpu_list", "0, 1\n");
    Write("block/nvme0c0n1/mq/1/cpu_list", "2, 3\n");
    Write("block/loop0/mq/0/cpu_list", "0, 1, 2, 3\n");
    std::filesystem::create_directories(root_ / "block/nvme0n1");
  }
  void Write(const std::string& rel, const std::string& text) {
    std::filesystem::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text;
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  std::filesystem::path root_;
};

TEST_F(SysTree, CpusOfEachHardwareQueue) {
  std::vector<model::PathHctxIo> p(1);
  p[0].path = "nvme0c0n1";
  p[0].hctxs.resize(3);
  p[0].hctxs[0].index = 0;
  p[0].hctxs[1].index = 1;
  p[0].hctxs[2].index = 2;  // not in sysfs (the queue count shrank)
  AddHctxCpus(SysfsReader(root_.string()), p);
  EXPECT_EQ(p[0].hctxs[0].cpus, (model::CpuSet{0, 1}));
  EXPECT_EQ(p[0].hctxs[1].cpus, (model::CpuSet{2, 3}));
  EXPECT_TRUE(p[0].hctxs[2].cpus.empty());
}

TEST_F(SysTree, CountsEveryDevicesHardwareQueues) {
  EXPECT_EQ(CountHctxs(SysfsReader(root_.string())), 3);
  EXPECT_EQ(CountHctxs(SysfsReader((root_ / "absent").string())), 0);
  EXPECT_EQ(CountDisks(SysfsReader(root_.string())), 3);
  EXPECT_EQ(CountDisks(SysfsReader((root_ / "absent").string())), 0);
  EXPECT_EQ(bpf::IoSlotsFor(0), 16u);
  EXPECT_EQ(bpf::IoSlotsFor(3), 16u);
  EXPECT_EQ(bpf::IoSlotsFor(5), 32u);
  EXPECT_EQ(bpf::IoSlotsFor(20), 128u);
  EXPECT_EQ(bpf::IoSlotsFor(-1), 16u);
  EXPECT_EQ(bpf::IoSlotsFor(1 << 30), 128u);
  EXPECT_EQ(bpf::HctxSlotsFor(3), 256u);
  EXPECT_EQ(bpf::HctxSlotsFor(1000), 2000u);
  EXPECT_EQ(bpf::HctxSlotsFor(100000), 16384u);
}

}  // namespace
}  // namespace pathwise::collectors

// SPDX-License-Identifier: Apache-2.0
// Host tests of the BPF sampler against the running kernel (label `bpf`):
// a re-attached loop device is a new disk, bpf_stats, teardown, map
// preallocation, the verifier and the kernel layout from BTF; see
// sampler_host_fixture.h.
#include <gtest/gtest.h>

#include "tests/bpf/sampler_host_fixture.h"

namespace pathwise::bpf {
namespace {

using host_test::BpfHostTest;

// Reads of `name` in a snapshot, live and retired entries summed (what the
// collector joins under the name), and those of the live entry `seq`.
uint64_t ReadsOf(const SamplerSnapshot& s, const std::string& name) {
  uint64_t n = 0;
  for (const DeviceIo& d : s.io) {
    if (d.disk == name && d.op == Op::kRead) n += d.stats.completed;
  }
  return n;
}
uint64_t LiveReadsOf(const SamplerSnapshot& s, model::DevId dev, uint64_t seq) {
  uint64_t n = 0;
  for (const DeviceIo& d : s.io) {
    if (d.dev == dev && d.diskseq == seq && !d.retired && d.op == Op::kRead)
      n += d.stats.completed;
  }
  return n;
}

// The (dev_t, diskseq) keys of the sampler's pw_io map and I/O slots.
std::vector<std::pair<uint32_t, uint64_t>> IoMapKeys(const BpfSampler& s) {
  std::vector<std::pair<uint32_t, uint64_t>> out;
  const int fd = host_test::MapFdByName(s, "pw_io");
  EXPECT_GE(fd, 0) << "no pw_io map";
  if (fd >= 0) {
    pw_io_key key = {}, next = {};
    const pw_io_key* prev = nullptr;
    while (bpf_map_get_next_key(fd, prev, &next) == 0) {
      out.emplace_back(next.dev, next.seq);
      key = next;
      prev = &key;
    }
    close(fd);
  }
  for (const host_test::IoSlot& slot : host_test::IoSlots(s)) {
    if (slot.owner.devop != 0 && slot.owner.devop != PW_IO_SLOT_RETIRING) {
      out.emplace_back(uint32_t(slot.owner.devop >> 32), slot.owner.seq);
    }
  }
  return out;
}

// A loop device detached and attached again keeps its name and dev_t but
// is a new disk (a new diskseq), as a path disk that reuses the dev_t of
// one that left: its I/O is counted under its own key from zero, the old
// disk's entries leave the kernel maps, and the name's total never goes
// backwards.
TEST_F(BpfHostTest, ReattachedLoopDeviceIsANewDisk) {
  std::string err;
  std::unique_ptr<LoopDevice> loop = LoopDevice::Create(&err);
  ASSERT_NE(loop, nullptr) << err;
  const uint64_t seq1 = loop->DiskSeq();
  ASSERT_GT(seq1, 0u) << "no /sys/block/" << loop->name() << "/diskseq";
  absl::StatusOr<std::unique_ptr<BpfSampler>> sampler = BpfSampler::Create();
  ASSERT_TRUE(sampler.ok()) << sampler.status();
  const uint32_t kdev = loop->dev().major << 20 | loop->dev().minor;

  constexpr uint64_t kN1 = 400, kN2 = 300;
  // The completions the kernel hides from BPF programs on some kernels
  // (sampler_host_fixture.h), told apart from a loss by a tracefs witness.
  absl::StatusOr<std::unique_ptr<CompletionTrace>> witness1 =
      CompletionTrace::Start(kdev);
  ASSERT_TRUE(witness1.ok()) << witness1.status();
  ASSERT_EQ(Fio(loop->path(), "randread", kN1).status, 0);
  absl::StatusOr<SamplerSnapshot> s1 = (*sampler)->Read();
  ASSERT_TRUE(s1.ok()) << s1.status();
  const uint64_t hidden1 = host_test::HiddenCompletions(**witness1, **sampler);
  host_test::ExpectCountedBut(LiveReadsOf(*s1, loop->dev(), seq1), kN1,
                              hidden1);
  host_test::ExpectCountedBut(ReadsOf(*s1, loop->name()), kN1, hidden1);

  ASSERT_TRUE(loop->Reattach(&err)) << err;
  const uint64_t seq2 = loop->DiskSeq();
  ASSERT_GT(seq2, seq1);
  // Whatever probing did on the new disk is in `mid`.
  absl::StatusOr<SamplerSnapshot> mid = (*sampler)->Read();
  ASSERT_TRUE(mid.ok()) << mid.status();
  std::optional<BlockStat> sys_mid = ReadBlockStat(loop->name());
  ASSERT_TRUE(sys_mid.has_value());
  absl::StatusOr<std::unique_ptr<CompletionTrace>> witness =
      CompletionTrace::Start(kdev);
  ASSERT_TRUE(witness.ok()) << witness.status();
  ASSERT_EQ(Fio(loop->path(), "randread", kN2).status, 0);
  absl::StatusOr<SamplerSnapshot> s2 = (*sampler)->Read();
  ASSERT_TRUE(s2.ok()) << s2.status();
  std::optional<BlockStat> sys2 = ReadBlockStat(loop->name());
  ASSERT_TRUE(sys2.has_value());
  const uint64_t hidden = host_test::HiddenCompletions(**witness, **sampler);
  RecordProperty("hidden", std::to_string(hidden1 + hidden));

  // The new disk's reads, exactly, under its own key and the same name
  // (less those the kernel hid, counted by the witness).
  host_test::ExpectCountedBut(LiveReadsOf(*s2, loop->dev(), seq2) -
                                  LiveReadsOf(*mid, loop->dev(), seq2),
                              kN2, hidden);
  EXPECT_EQ(sys2->reads - sys_mid->reads, kN2);
  EXPECT_EQ(LiveReadsOf(*s2, loop->dev(), seq1), 0u);
  for (const DeviceIo& d : s2->io) {
    if (d.dev == loop->dev()) EXPECT_EQ(d.disk, loop->name());
  }
  // The old disk's counts are kept (retired), the name's total is
  // monotonic and adds up.
  uint64_t retired = 0;
  for (const DeviceIo& d : s2->io) {
    if (d.retired && d.disk == loop->name() && d.op == Op::kRead) {
      retired += d.stats.completed;
    }
  }
  host_test::ExpectCountedBut(retired, kN1, hidden1);
  EXPECT_GE(ReadsOf(*mid, loop->name()), ReadsOf(*s1, loop->name()));
  host_test::ExpectCountedBut(
      ReadsOf(*s2, loop->name()) - ReadsOf(*mid, loop->name()), kN2, hidden);
  // The old disk's entries have left the kernel maps, its I/O slots given
  // back empty.
  for (const auto& [dev, seq] : IoMapKeys(**sampler)) {
    EXPECT_FALSE(dev == kdev && seq == seq1)
        << "pw_io or an I/O slot still holds the detached disk's entry";
  }
  for (const host_test::IoSlot& slot : host_test::IoSlots(**sampler)) {
    EXPECT_NE(slot.owner.devop, PW_IO_SLOT_RETIRING);
    if (slot.owner.devop == 0) {
      EXPECT_TRUE(slot.zero) << "a free I/O slot holds counts";
    }
  }
  bool new_key = false;
  for (const auto& [dev, seq] : IoMapKeys(**sampler)) {
    new_key |= dev == kdev && seq == seq2;
  }
  EXPECT_TRUE(new_key);
}

TEST_F(BpfHostTest, BpfStatsCountRuns) {
  SamplerOptions o;
  o.enable_bpf_stats = true;
  absl::StatusOr<std::unique_ptr<BpfSampler>> s = BpfSampler::Create(o);
  ASSERT_TRUE(s.ok()) << s.status();
  std::string err;
  std::unique_ptr<LoopDevice> loop = LoopDevice::Create(&err);
  ASSERT_NE(loop, nullptr) << err;
  // Completions the kernel hid from BPF (sampler_host_fixture.h) are runs
  // that never happened: counted by a tracefs witness.
  absl::StatusOr<std::unique_ptr<CompletionTrace>> witness =
      CompletionTrace::Start(loop->dev().major << 20 | loop->dev().minor);
  ASSERT_TRUE(witness.ok()) << witness.status();
  ASSERT_EQ(Fio(loop->path(), "randread", 500).status, 0);
  absl::StatusOr<SamplerSnapshot> snap = (*s)->Read();
  ASSERT_TRUE(snap.ok()) << snap.status();
  const uint64_t hidden = host_test::HiddenCompletions(**witness, **s);
  EXPECT_TRUE(snap->bpf_stats_enabled);
  uint64_t runs = 0, ns = 0;
  for (const ProgramStats& p : snap->programs) {
    runs += p.run_count;
    ns += p.run_time_ns;
    EXPECT_EQ(p.name.rfind("pw_", 0), 0u) << p.name;
  }
  EXPECT_GE(runs + hidden, 1000u);  // issue + complete per read
  EXPECT_GT(ns, 0u);
}

// Polls until none of `ids` exists any more (kernel frees are deferred).
template <typename GetFd>
std::vector<uint32_t> StillAlive(const std::vector<uint32_t>& ids,
                                 GetFd get_fd) {
  std::vector<uint32_t> alive;
  for (int attempt = 0; attempt < 100; ++attempt) {
    alive.clear();
    for (uint32_t id : ids) {
      const int fd = get_fd(id);
      if (fd >= 0) {
        close(fd);
        alive.push_back(id);
      }
    }
    if (alive.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return alive;
}

TEST_F(BpfHostTest, DestructionLeavesNothingBehind) {
  std::vector<uint32_t> progs, maps, links;
  {
    absl::StatusOr<std::unique_ptr<BpfSampler>> s = BpfSampler::Create();
    ASSERT_TRUE(s.ok()) << s.status();
    progs = (*s)->ProgramIds();
    maps = (*s)->MapIds();
    links = (*s)->LinkIds();
    ASSERT_FALSE(progs.empty());
    ASSERT_FALSE(maps.empty());
    ASSERT_FALSE(links.empty());
    // They are visible while the sampler lives.
    const CmdResult live = RunCmd("bpftool -j prog show");
    ASSERT_EQ(live.status, 0) << live.output;
    for (uint32_t id : progs) {
      EXPECT_NE(live.output.find(absl::StrCat("\"id\":", id, ",")),
                std::string::npos)
          << "prog " << id << " not listed by bpftool while attached";
    }
  }
  EXPECT_TRUE(StillAlive(progs, bpf_prog_get_fd_by_id).empty());
  EXPECT_TRUE(StillAlive(maps, bpf_map_get_fd_by_id).empty());
  EXPECT_TRUE(StillAlive(links, bpf_link_get_fd_by_id).empty());
  for (const char* what : {"prog", "map", "link"}) {
    const CmdResult r = RunCmd(absl::StrCat("bpftool -j ", what, " show"));
    ASSERT_EQ(r.status, 0) << r.output;
    const std::vector<uint32_t>& ids = std::string(what) == "prog"  ? progs
                                       : std::string(what) == "map" ? maps
                                                                    : links;
    for (uint32_t id : ids) {
      EXPECT_EQ(r.output.find(absl::StrCat("\"id\":", id, ",")),
                std::string::npos)
          << what << " " << id << " still listed by bpftool";
    }
    if (std::string(what) == "link") {
      for (uint32_t id : progs) {
        EXPECT_EQ(r.output.find(absl::StrCat("\"prog_id\":", id, ",")),
                  std::string::npos)
            << "a link to prog " << id << " is still listed";
      }
    }
  }
  // Nothing pinned either.
  const CmdResult pins = RunCmd(
      "grep -rl pathwise /sys/fs/bpf 2>/dev/null; ls -R /sys/fs/bpf "
      "2>/dev/null | grep -c pw_ || true");
  EXPECT_EQ(std::string(absl::StripAsciiWhitespace(pins.output)), "0")
      << pins.output;
}

// pw_path (failovers, NVMe status) must never allocate in the completion's
// atomic context: a preallocated map, not BPF_F_NO_PREALLOC.
TEST_F(BpfHostTest, PathMapIsPreallocated) {
  absl::StatusOr<std::unique_ptr<BpfSampler>> s = BpfSampler::Create();
  ASSERT_TRUE(s.ok()) << s.status();
  bool found = false;
  for (uint32_t id : (*s)->MapIds()) {
    const int fd = bpf_map_get_fd_by_id(id);
    ASSERT_GE(fd, 0) << id;
    bpf_map_info info = {};
    uint32_t len = sizeof(info);
    ASSERT_EQ(bpf_obj_get_info_by_fd(fd, &info, &len), 0);
    close(fd);
    if (std::string(info.name) != "pw_path") continue;
    found = true;
    EXPECT_EQ(info.type, BPF_MAP_TYPE_HASH);
    EXPECT_EQ(info.map_flags & BPF_F_NO_PREALLOC, 0u);
  }
  EXPECT_TRUE(found) << "no map named pw_path";
}

// The nvme_complete_rq program cannot attach on a host without nvme-core,
// but its raw_tp flavour must pass the verifier of this kernel. Load it
// with the layout of 6.1/6.12's struct nvme_request (retries at 17,
// status at 20) and check that loading succeeds.
TEST_F(BpfHostTest, NvmeProgramPassesTheVerifier) {
  struct btf* vmlinux = btf__load_vmlinux_btf();
  ASSERT_NE(vmlinux, nullptr);
  const int rq_id = btf__find_by_name_kind(vmlinux, "request", BTF_KIND_STRUCT);
  ASSERT_GT(rq_id, 0);
  const uint32_t rq_size = btf__type_by_id(vmlinux, rq_id)->size;
  btf__free(vmlinux);

  std::string log(1 << 20, '\0');
  LIBBPF_OPTS(bpf_object_open_opts, opts);
  opts.kernel_log_buf = log.data();
  opts.kernel_log_size = log.size();
  pathwise_nvme* skel = pathwise_nvme__open_opts(&opts);
  ASSERT_NE(skel, nullptr);
  skel->rodata->request_size = rq_size;
  skel->rodata->nvme_retries_off = 17;
  skel->rodata->nvme_status_shift = 24;
  bpf_program__set_autoload(skel->progs.pw_nvme_btf, false);
  bpf_program__set_autoload(skel->progs.pw_nvme_raw, true);
  const int err = pathwise_nvme__load(skel);
  EXPECT_EQ(err, 0) << "verifier log:\n" << log.c_str();
  pathwise_nvme__destroy(skel);
}

// The raw_tp flavour of the block programs (the fallback where tp_btf
// cannot attach) must pass this kernel's verifier too, diskseq read
// included; the sampler itself loads tp_btf here.
TEST_F(BpfHostTest, BlockRawTpProgramsPassTheVerifier) {
  std::string log(1 << 20, '\0');
  LIBBPF_OPTS(bpf_object_open_opts, opts);
  opts.kernel_log_buf = log.data();
  opts.kernel_log_size = log.size();
  pathwise_block* skel = pathwise_block__open_opts(&opts);
  ASSERT_NE(skel, nullptr);
  bpf_program__set_autoload(skel->progs.pw_issue_btf, false);
  bpf_program__set_autoload(skel->progs.pw_done_btf, false);
  const int err = pathwise_block__load(skel);
  EXPECT_EQ(err, 0) << "verifier log:\n" << log.c_str();
  pathwise_block__destroy(skel);

  // With the per hardware queue code (the verifier removes it when off).
  skel = pathwise_block__open_opts(&opts);
  ASSERT_NE(skel, nullptr);
  skel->rodata->queues = true;
  skel->rodata->hctx_slots = 256;
  bpf_map__set_max_entries(skel->maps.pw_hctx, 256);
  bpf_program__set_autoload(skel->progs.pw_issue_btf, false);
  bpf_program__set_autoload(skel->progs.pw_done_btf, false);
  EXPECT_EQ(pathwise_block__load(skel), 0) << "verifier log:\n" << log.c_str();
  pathwise_block__destroy(skel);
}

TEST_F(BpfHostTest, KernelLayoutFromRunningKernelBtf) {
  struct btf* vmlinux = btf__load_vmlinux_btf();
  ASSERT_NE(vmlinux, nullptr);
  absl::StatusOr<BlockLayout> l = ReadBlockLayout(vmlinux);
  btf__free(vmlinux);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->op_class[0], Op::kRead);
  EXPECT_EQ(l->op_class[1], Op::kWrite);
  EXPECT_NE(l->req_nvme_mpath_mask, 0u);
  EXPECT_NE(l->rqf_stats_mask, 0u);
}

}  // namespace
}  // namespace pathwise::bpf

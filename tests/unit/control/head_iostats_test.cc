// SPDX-License-Identifier: Apache-2.0
// The head iostats switch without root: the heads' queue/iostats files in a
// temporary tree, turned off while the snapshots say the eBPF sampler
// counts the heads, back on when it fails or another source collects, and
// on Stop; heads found off or turned on by someone else are left alone;
// dry-run writes nothing; a refused write is one failure, not a retry per
// interval, and a refused restore says how to undo it by hand.
#include "control/head_iostats.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/unit/log_capture.h"

namespace pathwise::control {
namespace {

namespace fs = std::filesystem;
using model::DecisionResult;
using model::HeadIostatsMode;

// A sysfs tree with heads nvme0n1 and nvme1n1, iostats 1.
class SysfsTree {
 public:
  SysfsTree() {
    char tmpl[] = "/tmp/pathwise-head-iostats-XXXXXX";
    root_ = mkdtemp(tmpl);
    for (const char* h : {"nvme0n1", "nvme1n1"}) {
      fs::create_directories(root_ + "/block/" + h + "/queue");
      Set(h, "1");
    }
  }
  ~SysfsTree() { fs::remove_all(root_); }
  const std::string& root() const { return root_; }
  std::string File(const std::string& head) const {
    return root_ + "/block/" + head + "/queue/iostats";
  }
  void Set(const std::string& head, const std::string& v) const {
    std::ofstream(File(head)) << v << "\n";
  }
  std::string Get(const std::string& head) const {
    std::ifstream in(File(head));
    std::string s;
    std::getline(in, s);
    return s;
  }

 private:
  std::string root_;
};

// A published snapshot with both heads, collected by `source`; the BPF
// collector's result is `bpf_ok` when the source is the sampler.
model::Snapshot Snap(model::IoSource source, bool bpf_ok = true) {
  model::Snapshot s;
  s.io_source = source;
  for (const char* h : {"nvme0n1", "nvme1n1"}) {
    model::Head head;
    head.name = h;
    head.subsystem = "nvme-subsys0";
    s.topology.heads.push_back(head);
  }
  if (source == model::IoSource::kBpf) {
    s.collectors.push_back({.name = "bpf_io", .success = bpf_ok});
  } else {
    s.collectors.push_back({.name = "nvme_iostats", .success = true});
  }
  return s;
}

uint64_t Changes(const model::HeadIostatsReport& r, bool restore,
                 DecisionResult result) {
  auto it = r.changes_total.find({.restore = restore, .result = result});
  return it == r.changes_total.end() ? 0 : it->second;
}

HeadIostatsSwitch Make(const SysfsTree& tree, HeadIostatsMode mode) {
  return HeadIostatsSwitch({.mode = mode, .sysfs_root = tree.root()});
}

TEST(HeadIostatsTest, OffWhileTheSamplerCountsThenOnAgainOnStop) {
  SysfsTree tree;
  testing::LogCapture log;
  HeadIostatsSwitch sw = Make(tree, HeadIostatsMode::kOff);
  sw.Act(Snap(model::IoSource::kBpf));
  EXPECT_EQ(tree.Get("nvme0n1"), "0");
  EXPECT_EQ(tree.Get("nvme1n1"), "0");
  sw.Act(Snap(model::IoSource::kBpf));  // nothing more to do
  model::HeadIostatsReport r = sw.Report();
  EXPECT_EQ(r.mode, HeadIostatsMode::kOff);
  EXPECT_EQ(r.heads_off, 2u);
  EXPECT_EQ(Changes(r, false, DecisionResult::kApplied), 2u);
  sw.Stop();
  EXPECT_EQ(tree.Get("nvme0n1"), "1");
  EXPECT_EQ(tree.Get("nvme1n1"), "1");
  r = sw.Report();
  EXPECT_EQ(r.heads_off, 0u);
  EXPECT_EQ(Changes(r, true, DecisionResult::kApplied), 2u);
  sw.Act(Snap(model::IoSource::kBpf));  // stopped: nothing
  EXPECT_EQ(tree.Get("nvme0n1"), "1");
  int off_lines = 0, on_lines = 0;
  for (const std::string& l : log.Lines()) {
    off_lines += l.find("off (wrote 0 to") != std::string::npos;
    on_lines += l.find("on again (wrote 1 to") != std::string::npos &&
                l.find("pathwise is stopping") != std::string::npos;
  }
  EXPECT_EQ(off_lines, 2);
  EXPECT_EQ(on_lines, 2);
}

TEST(HeadIostatsTest, OnAgainWhenTheSamplerFailsOrSysfsCollects) {
  SysfsTree tree;
  testing::LogCapture log;
  HeadIostatsSwitch sw = Make(tree, HeadIostatsMode::kOff);
  sw.Act(Snap(model::IoSource::kBpf));
  ASSERT_EQ(tree.Get("nvme0n1"), "0");
  sw.Act(Snap(model::IoSource::kBpf, /*bpf_ok=*/false));
  EXPECT_EQ(tree.Get("nvme0n1"), "1");
  EXPECT_EQ(tree.Get("nvme1n1"), "1");
  EXPECT_EQ(sw.Report().heads_off, 0u);
  sw.Act(Snap(model::IoSource::kBpf));  // the sampler is back
  EXPECT_EQ(tree.Get("nvme0n1"), "0");
  sw.Act(Snap(model::IoSource::kSysfs));  // the sysfs counters need them
  EXPECT_EQ(tree.Get("nvme0n1"), "1");
  EXPECT_EQ(tree.Get("nvme1n1"), "1");
  const model::HeadIostatsReport r = sw.Report();
  EXPECT_EQ(Changes(r, false, DecisionResult::kApplied), 4u);
  EXPECT_EQ(Changes(r, true, DecisionResult::kApplied), 4u);
}

TEST(HeadIostatsTest, OthersChoicesAreLeftAlone) {
  SysfsTree tree;
  testing::LogCapture log;
  tree.Set("nvme1n1", "0");  // the admin turned it off: not pathwise's
  HeadIostatsSwitch sw = Make(tree, HeadIostatsMode::kOff);
  sw.Act(Snap(model::IoSource::kBpf));
  EXPECT_EQ(tree.Get("nvme0n1"), "0");
  EXPECT_EQ(sw.Report().heads_off, 1u);
  // Someone turns nvme0n1 back on: theirs from then on.
  tree.Set("nvme0n1", "1");
  sw.Stop();
  EXPECT_EQ(tree.Get("nvme0n1"), "1");
  EXPECT_EQ(tree.Get("nvme1n1"), "0");  // never restored: never ours
  const model::HeadIostatsReport r = sw.Report();
  EXPECT_EQ(Changes(r, false, DecisionResult::kApplied), 1u);
  EXPECT_EQ(Changes(r, true, DecisionResult::kApplied), 0u);
}

TEST(HeadIostatsTest, DryRunWritesNothing) {
  SysfsTree tree;
  testing::LogCapture log;
  HeadIostatsSwitch sw = Make(tree, HeadIostatsMode::kDryRun);
  sw.Act(Snap(model::IoSource::kBpf));
  sw.Act(Snap(model::IoSource::kBpf));
  EXPECT_EQ(tree.Get("nvme0n1"), "1");
  EXPECT_EQ(sw.Report().heads_off, 2u);
  sw.Stop();
  EXPECT_EQ(tree.Get("nvme0n1"), "1");
  const model::HeadIostatsReport r = sw.Report();
  EXPECT_EQ(Changes(r, false, DecisionResult::kDryRun), 2u);
  EXPECT_EQ(Changes(r, true, DecisionResult::kDryRun), 2u);
  EXPECT_EQ(Changes(r, false, DecisionResult::kApplied), 0u);
  bool said = false;
  for (const std::string& l : log.Lines()) {
    said |= l.find("dry run: would write 0 to " + tree.File("nvme0n1")) !=
            std::string::npos;
  }
  EXPECT_TRUE(said);
}

TEST(HeadIostatsTest, KeepDoesNothing) {
  SysfsTree tree;
  HeadIostatsSwitch sw = Make(tree, HeadIostatsMode::kKeep);
  sw.Act(Snap(model::IoSource::kBpf));
  sw.Stop();
  EXPECT_EQ(tree.Get("nvme0n1"), "1");
  EXPECT_TRUE(sw.Report().changes_total.empty());
}

// Sysfs that refuses writes of `refused` to nvme0n1 (as without write
// access), and otherwise is the tree.
class Refusing : public AttrIo {
 public:
  explicit Refusing(std::string refused) : refused_(std::move(refused)) {}
  absl::Status Write(const std::string& path, absl::string_view v) override {
    ++writes;
    if (v == refused_ && path.find("/nvme0n1/") != std::string::npos) {
      return absl::PermissionDeniedError("cannot open " + path);
    }
    return AttrIo::Write(path, v);
  }
  int writes = 0;

 private:
  std::string refused_;
};

TEST(HeadIostatsTest, ARefusedWriteIsOneFailureNotARetryPerInterval) {
  SysfsTree tree;
  testing::LogCapture log;
  auto io = std::make_unique<Refusing>("0");
  Refusing* fake = io.get();
  HeadIostatsSwitch sw(
      {.mode = HeadIostatsMode::kOff, .sysfs_root = tree.root()},
      std::move(io));
  for (int i = 0; i < 5; ++i) sw.Act(Snap(model::IoSource::kBpf));
  EXPECT_EQ(fake->writes, 2);  // one each, never again
  EXPECT_EQ(tree.Get("nvme0n1"), "1");
  EXPECT_EQ(tree.Get("nvme1n1"), "0");
  model::HeadIostatsReport r = sw.Report();
  EXPECT_EQ(r.heads_off, 1u);
  EXPECT_EQ(Changes(r, false, DecisionResult::kFailed), 1u);
  EXPECT_EQ(Changes(r, false, DecisionResult::kApplied), 1u);
  sw.Stop();
  EXPECT_EQ(tree.Get("nvme1n1"), "1");
}

TEST(HeadIostatsTest, ARefusedRestoreIsAnErrorThatSaysHowToUndoIt) {
  SysfsTree tree;
  testing::LogCapture log;
  HeadIostatsSwitch sw(
      {.mode = HeadIostatsMode::kOff, .sysfs_root = tree.root()},
      std::make_unique<Refusing>("1"));
  sw.Act(Snap(model::IoSource::kBpf));
  sw.Stop();
  EXPECT_EQ(tree.Get("nvme0n1"), "0");
  EXPECT_EQ(tree.Get("nvme1n1"), "1");
  const model::HeadIostatsReport r = sw.Report();
  EXPECT_EQ(Changes(r, true, DecisionResult::kFailed), 1u);
  EXPECT_EQ(Changes(r, true, DecisionResult::kApplied), 1u);
  bool said = false;
  for (const std::string& l : log.Lines()) {
    said |=
        l.rfind("error ", 0) == 0 &&
        l.find("`echo 1 > " + tree.File("nvme0n1") + "`") != std::string::npos;
  }
  EXPECT_TRUE(said);
}

TEST(HeadIostatsTest, AGoneHeadIsForgotten) {
  SysfsTree tree;
  testing::LogCapture log;
  HeadIostatsSwitch sw = Make(tree, HeadIostatsMode::kOff);
  sw.Act(Snap(model::IoSource::kBpf));
  ASSERT_EQ(sw.Report().heads_off, 2u);
  fs::remove_all(tree.root() + "/block/nvme0n1");
  model::Snapshot s = Snap(model::IoSource::kBpf);
  s.topology.heads.erase(s.topology.heads.begin());
  sw.Act(s);
  EXPECT_EQ(sw.Report().heads_off, 1u);
  sw.Stop();
  EXPECT_EQ(Changes(sw.Report(), true, DecisionResult::kApplied), 1u);
  EXPECT_EQ(Changes(sw.Report(), true, DecisionResult::kFailed), 0u);
}

}  // namespace
}  // namespace pathwise::control

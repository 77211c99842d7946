// SPDX-License-Identifier: Apache-2.0
#include <memory>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/snapshot_store.h"
#include "model/synthetic.h"
#include "model/topology.h"

namespace pathwise::model {
namespace {

using ::testing::ElementsAre;

TEST(NaturalLess, OrdersKernelNamesNumerically) {
  std::vector<std::string> v = {"nvme10",    "nvme2",         "nvme1c10n1",
                                "nvme1c2n1", "nvme-subsys10", "nvme-subsys9",
                                "nvme1"};
  std::sort(v.begin(), v.end(), NaturalLess);
  EXPECT_THAT(v, ElementsAre("nvme-subsys9", "nvme-subsys10", "nvme1",
                             "nvme1c2n1", "nvme1c10n1", "nvme2", "nvme10"));
  EXPECT_FALSE(NaturalLess("nvme1", "nvme1"));
}

TEST(NaturalLess, LeadingZerosAndEqualPrefixes) {
  EXPECT_TRUE(NaturalLess("nvme9", "nvme10"));
  EXPECT_FALSE(NaturalLess("nvme10", "nvme9"));
  EXPECT_TRUE(NaturalLess("nvme1", "nvme1c0n1"));
  EXPECT_TRUE(NaturalLess("loop", "nvme0"));
}

TEST(ControllerState, DeletingNoIoIsDeletingInTheStateSet) {
  EXPECT_EQ(StateSetMember(ControllerState::kDeletingNoIo),
            ControllerState::kDeleting);
  EXPECT_EQ(StateSetMember(ControllerState::kLive), ControllerState::kLive);
}

TEST(Topology, FindAndSort) {
  Topology t;
  t.controllers = {{.name = "nvme10"}, {.name = "nvme2"}};
  t.paths = {{.name = "nvme0c10n1"}, {.name = "nvme0c2n1"}};
  t.Sort();
  EXPECT_EQ(t.controllers[0].name, "nvme2");
  EXPECT_EQ(t.paths[0].name, "nvme0c2n1");
  ASSERT_NE(t.FindController("nvme10"), nullptr);
  EXPECT_EQ(t.FindController("nvme3"), nullptr);
  EXPECT_EQ(t.FindPath("nvme0c2n1")->name, "nvme0c2n1");
}

TEST(Topology, StructureDiffersIgnoresStateButNotMembership) {
  Snapshot a = MakeSyntheticSnapshot({});
  Topology b = a.topology;
  EXPECT_FALSE(StructureDiffers(a.topology, b));

  b.paths[0].ana_state = AnaState::kInaccessible;  // state: not structure
  b.controllers[0].state = ControllerState::kConnecting;
  EXPECT_FALSE(StructureDiffers(a.topology, b));

  Topology gone = a.topology;  // a path and its controller vanish
  gone.paths.pop_back();
  gone.controllers.pop_back();
  EXPECT_TRUE(StructureDiffers(a.topology, gone));

  Topology relinked = a.topology;  // same names, different relation
  relinked.paths[0].controller = "nvme9";
  EXPECT_TRUE(StructureDiffers(a.topology, relinked));
}

TEST(Synthetic, HasRequestedShape) {
  Snapshot s = MakeSyntheticSnapshot({.subsystems = 4,
                                      .heads_per_subsystem = 16,
                                      .controllers_per_subsystem = 4});
  EXPECT_EQ(s.topology.subsystems.size(), 4u);
  EXPECT_EQ(s.topology.heads.size(), 64u);
  EXPECT_EQ(s.topology.paths.size(), 256u);
  EXPECT_EQ(s.topology.controllers.size(), 16u);
  EXPECT_EQ(s.path_io.size(), 256u);
  // Head counters are the sum of their paths'.
  const Head& h = s.topology.heads[0];
  uint64_t sum = 0;
  for (const Path& p : s.topology.paths) {
    if (p.head == h.name) sum += s.path_io[p.name].op(Op::kRead)->completed;
  }
  EXPECT_EQ(s.head_io[h.name].op(Op::kRead)->completed, sum);
}

TEST(Snapshot, AllCollectorsSucceeded) {
  Snapshot s;
  EXPECT_TRUE(s.AllCollectorsSucceeded());
  s.collectors = {{"a", 0, true, ""}, {"b", 0, false, "x"}};
  EXPECT_FALSE(s.AllCollectorsSucceeded());
}

TEST(SnapshotStore, PublishesImmutableSnapshotsReadersKeepTheirs) {
  SnapshotStore store;
  EXPECT_EQ(store.Load(), nullptr);
  auto first = std::make_shared<Snapshot>();
  first->generation = 1;
  store.Publish(first);
  std::shared_ptr<const Snapshot> held = store.Load();
  auto second = std::make_shared<Snapshot>();
  second->generation = 2;
  store.Publish(second);
  EXPECT_EQ(held->generation, 1u);  // a reader's snapshot is never changed
  EXPECT_EQ(store.Load()->generation, 2u);
}

TEST(SnapshotStore, ConcurrentPublishAndLoad) {
  SnapshotStore store;
  std::thread writer([&] {
    for (uint64_t i = 1; i <= 2000; ++i) {
      auto s = std::make_shared<Snapshot>();
      s->generation = i;
      store.Publish(s);
    }
  });
  uint64_t last = 0;
  for (int i = 0; i < 2000; ++i) {
    if (auto s = store.Load()) {
      EXPECT_GE(s->generation, last);  // generations never go backwards
      last = s->generation;
    }
  }
  writer.join();
  EXPECT_EQ(store.Load()->generation, 2000u);
}

// What a host without NVMe multipath says, by what the scan found.
TEST(Presence, SaysWhatWasFoundWhenNothingIsMultipath) {
  const std::string want =
      "no NVMe multipath subsystems: is nvme_core loaded with multipath=Y? (";
  Topology t;
  t.subsystem_class = false;
  MultipathPresence p = Presence(t);
  EXPECT_EQ(p.subsystems, 0);
  EXPECT_EQ(p.multipath_subsystems, 0);
  EXPECT_EQ(p.notice,
            want + "no /sys/class/nvme-subsystem: nvme_core is not loaded)");
  t.subsystem_class = true;
  EXPECT_EQ(Presence(t).notice,
            want + "/sys/class/nvme-subsystem is empty: no NVMe device)");
  t.subsystems = {{.name = "nvme-subsys0"}, {.name = "nvme-subsys1"}};
  p = Presence(t);
  EXPECT_EQ(p.subsystems, 2);
  EXPECT_EQ(p.notice, want + "2 NVMe subsystems, none with a multipath head)");
  t.subsystems.resize(1);
  EXPECT_EQ(Presence(t).notice,
            want + "1 NVMe subsystem, none with a multipath head)");
}

TEST(Presence, NoNoticeWithAMultipathHead) {
  Topology t;
  t.subsystems = {{.name = "nvme-subsys0"}, {.name = "nvme-subsys1"}};
  t.heads = {{.name = "nvme1n1", .subsystem = "nvme-subsys1"}};
  const MultipathPresence p = Presence(t);
  EXPECT_EQ(p.subsystems, 2);
  EXPECT_EQ(p.multipath_subsystems, 1);
  EXPECT_EQ(p.notice, "");
  EXPECT_EQ(Presence(MakeSyntheticSnapshot({}).topology).notice, "");
}

}  // namespace
}  // namespace pathwise::model

// SPDX-License-Identifier: Apache-2.0
// Namespace discovery for the datapath: grouping per-controller namespaces
// by identity and subsystem (pure), reading them from a sysfs tree laid out
// as the kernel does with nvme_core.multipath=N (built here, as no captured
// fixture has multipath off), and the captured multipath-on tree.
#include "datapath/namespaces.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "tests/unit/collectors/sys_fixture.h"

namespace pathwise::datapath {
namespace {

namespace fs = std::filesystem;

NamespacePath Path(const std::string& name, int ctrl, const std::string& nqn,
                   const std::string& wwid) {
  NamespacePath p;
  p.name = name;
  p.generic = "ng" + name.substr(4);
  p.controller = "nvme" + std::to_string(ctrl);
  p.controller_instance = ctrl;
  p.subsysnqn = nqn;
  p.wwid = wwid;
  p.nsid = 1;
  return p;
}

TEST(NamespaceIdentityTest, PrefersNguidThenEuiThenUuidThenWwid) {
  NamespacePath p = Path("nvme0n1", 0, "nqn.a", "nvme.1234-abc");
  EXPECT_EQ(NamespaceIdentity(p), "nvme.1234-abc");
  p.uuid = "bd074d55-85ae-4557-bd5e-95253987f149";
  EXPECT_EQ(NamespaceIdentity(p), "uuid.bd074d55-85ae-4557-bd5e-95253987f149");
  p.eui = "0011223344556677";
  EXPECT_EQ(NamespaceIdentity(p), "eui.0011223344556677");
  p.nguid = "00000000-0000-0000-0000-000000000000";  // all zero: none
  EXPECT_EQ(NamespaceIdentity(p), "eui.0011223344556677");
  p.nguid = "6c6e7656-0000-0000-0000-000000000001";
  EXPECT_EQ(NamespaceIdentity(p), "nguid.6c6e7656-0000-0000-0000-000000000001");
}

TEST(GroupNamespacesTest, GroupsByIdentityAndSubsystem) {
  const std::string u1 = "uuid.11111111-1111-1111-1111-111111111111";
  const std::string u2 = "uuid.22222222-2222-2222-2222-222222222222";
  std::vector<NamespacePath> paths = {
      Path("nvme2n1", 2, "nqn.a", u1), Path("nvme0n1", 0, "nqn.a", u1),
      Path("nvme1n2", 1, "nqn.a", u2), Path("nvme1n1", 1, "nqn.a", u1),
      // The same identity in another subsystem is another namespace.
      Path("nvme3n1", 3, "nqn.b", u1),
      // No identity at all: left out.
      Path("nvme4n1", 4, "nqn.c", "")};
  const std::vector<NamespaceGroup> groups = GroupNamespaces(paths);
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].id, u1);
  EXPECT_EQ(groups[0].subsysnqn, "nqn.a");
  ASSERT_EQ(groups[0].paths.size(), 3u);
  // Ordered by controller instance: path i is controller i.
  EXPECT_EQ(groups[0].paths[0].name, "nvme0n1");
  EXPECT_EQ(groups[0].paths[1].name, "nvme1n1");
  EXPECT_EQ(groups[0].paths[2].name, "nvme2n1");
  EXPECT_EQ(groups[1].id, u2);
  EXPECT_EQ(groups[1].paths.size(), 1u);
  EXPECT_EQ(groups[2].subsysnqn, "nqn.b");
}

TEST(ResolveNamespaceTest, ByAutoIdentityOrName) {
  const std::string u1 = "uuid.11111111-1111-1111-1111-111111111111";
  const std::string u2 = "uuid.22222222-2222-2222-2222-222222222222";
  const std::vector<NamespaceGroup> groups = GroupNamespaces(
      {Path("nvme0n1", 0, "nqn.a", u1), Path("nvme1n1", 1, "nqn.a", u1),
       Path("nvme0n2", 0, "nqn.a", u2)});
  EXPECT_EQ(ResolveNamespace(groups, "auto")->id, u1);
  EXPECT_EQ(ResolveNamespace(groups, u1)->id, u1);
  EXPECT_EQ(ResolveNamespace(groups, u1.substr(5))->id, u1);  // bare uuid
  EXPECT_EQ(ResolveNamespace(groups, "nvme1n1")->id, u1);
  EXPECT_EQ(ResolveNamespace(groups, "/dev/ng0n1")->id, u1);

  absl::StatusOr<NamespaceGroup> one = ResolveNamespace(groups, "nvme0n2");
  EXPECT_TRUE(absl::IsFailedPrecondition(one.status()));
  EXPECT_EQ(one.status().message(),
            "namespace " + u2 +
                " (nvme0n2) has one path; the datapath needs two or more");
  absl::StatusOr<NamespaceGroup> none = ResolveNamespace(groups, "nvme9n9");
  EXPECT_TRUE(absl::IsNotFound(none.status()));
  EXPECT_EQ(none.status().message(),
            "no such namespace: nvme9n9 (want auto, an identity such as "
            "uuid.<uuid>, or a per-controller name such as nvme0n1)");
}

TEST(ResolveNamespaceTest, AutoNeedsExactlyOneMultipathNamespace) {
  EXPECT_TRUE(absl::IsNotFound(ResolveNamespace({}, "auto").status()));
  const std::vector<NamespaceGroup> single =
      GroupNamespaces({Path("nvme0n1", 0, "nqn.a", "uuid.1")});
  EXPECT_EQ(ResolveNamespace(single, "auto").status().message(),
            "no namespace has more than one path: uuid.1 (nvme0n1) has one; "
            "the datapath needs two or more");
  const std::vector<NamespaceGroup> two =
      GroupNamespaces({Path("nvme0n1", 0, "nqn.a", "uuid.1"),
                       Path("nvme1n1", 1, "nqn.a", "uuid.1"),
                       Path("nvme0n2", 0, "nqn.a", "uuid.2"),
                       Path("nvme1n2", 1, "nqn.a", "uuid.2")});
  EXPECT_EQ(ResolveNamespace(two, "auto").status().message(),
            "--namespace auto: several namespaces have more than one path; "
            "pick one of uuid.1, uuid.2");
}

// A sysfs tree with multipath off: controllers nvme0..nvmeN-1, each with
// its own node of namespace 1.
class SysfsTree {
 public:
  SysfsTree() {
    char tmpl[] = "/tmp/pathwise-ns-XXXXXX";
    root_ = mkdtemp(tmpl);
    Write("module/nvme_core/parameters/multipath", "N");
  }
  ~SysfsTree() { fs::remove_all(root_); }
  const std::string& root() const { return root_; }

  void Write(const std::string& rel, const std::string& value) {
    const fs::path p = fs::path(root_) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << value << "\n";
  }
  void AddController(int c, const std::string& nqn, const std::string& uuid,
                     int max_kb) {
    const std::string ctrl = "class/nvme/nvme" + std::to_string(c);
    Write(ctrl + "/subsysnqn", nqn);
    Write(ctrl + "/state", "live");
    Write(ctrl + "/numa_node", "-1");
    const std::string ns = ctrl + "/nvme" + std::to_string(c) + "n1";
    Write(ns + "/wwid", "uuid." + uuid);
    Write(ns + "/uuid", uuid);
    Write(ns + "/nsid", "1");
    Write(ns + "/size", "8388608");
    Write(ns + "/queue/logical_block_size", "4096");
    Write(ns + "/queue/physical_block_size", "4096");
    Write(ns + "/queue/max_hw_sectors_kb", std::to_string(max_kb));
    Write(ns + "/queue/max_segments", "257");
    Write(ns + "/queue/discard_max_hw_bytes", "4294966784");
    Write(ns + "/queue/write_zeroes_max_bytes", "0");
    Write(ns + "/queue/write_cache", "write back");
    Write(ns + "/queue/fua", "1");
    // What else lives there: a path of a head (multipath on) and the
    // controller's other attributes are not namespaces.
    Write(ctrl + "/nvme9c" + std::to_string(c) + "n1/nsid", "1");
  }

 private:
  std::string root_;
};

TEST(ReadNamespacePathsTest, ReadsEveryControllersNode) {
  SysfsTree t;
  const std::string uuid = "bd074d55-85ae-4557-bd5e-95253987f149";
  t.AddController(0, "nqn.2026-11.io.pathwise:testbed", uuid, 512);
  t.AddController(1, "nqn.2026-11.io.pathwise:testbed", uuid, 128);
  EXPECT_FALSE(NativeMultipathOn(t.root()));
  absl::StatusOr<std::vector<NamespacePath>> paths =
      ReadNamespacePaths(t.root());
  ASSERT_TRUE(paths.ok()) << paths.status();
  ASSERT_EQ(paths->size(), 2u);
  const std::vector<NamespaceGroup> groups = GroupNamespaces(*paths);
  ASSERT_EQ(groups.size(), 1u);
  const NamespaceGroup& g = groups[0];
  EXPECT_EQ(g.id, "uuid." + uuid);
  ASSERT_EQ(g.paths.size(), 2u);
  const NamespacePath& p = g.paths[1];
  EXPECT_EQ(p.name, "nvme1n1");
  EXPECT_EQ(p.generic, "ng1n1");
  EXPECT_EQ(p.controller, "nvme1");
  EXPECT_EQ(p.controller_instance, 1);
  EXPECT_EQ(p.controller_state, "live");
  EXPECT_EQ(p.nsid, 1u);
  EXPECT_EQ(p.size_sectors, 8388608u);
  EXPECT_EQ(p.logical_block_size, 4096u);
  EXPECT_EQ(p.max_hw_sectors_kb, 128u);
  EXPECT_EQ(p.max_segments, 257u);
  EXPECT_EQ(p.discard_max_hw_bytes, 4294966784u);
  EXPECT_EQ(p.write_zeroes_max_bytes, 0u);
  EXPECT_TRUE(p.volatile_cache);
  EXPECT_TRUE(p.fua);
}

TEST(ReadNamespacePathsTest, NoControllersIsNoPaths) {
  SysfsTree t;
  absl::StatusOr<std::vector<NamespacePath>> paths =
      ReadNamespacePaths(t.root());
  ASSERT_TRUE(paths.ok());
  EXPECT_TRUE(paths->empty());
}

// The captured tree has native multipath on: the nodes under each
// controller are paths of a head (nvme0c0n1), not namespaces of their own.
TEST(ReadNamespacePathsTest, MultipathOnTreeHasNoPerControllerNamespaces) {
  const std::string root = testing::FixtureDir("tcp2-6.12");
  EXPECT_TRUE(NativeMultipathOn(root));
  absl::StatusOr<std::vector<NamespacePath>> paths = ReadNamespacePaths(root);
  ASSERT_TRUE(paths.ok());
  EXPECT_TRUE(paths->empty());
}

}  // namespace
}  // namespace pathwise::datapath

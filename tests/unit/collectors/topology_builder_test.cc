// SPDX-License-Identifier: Apache-2.0
// BuildTopology() on hand-made raw scans: no /sys, no root.
#include "collectors/topology_builder.h"

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pathwise::collectors {
namespace {

using ::testing::HasSubstr;

RawController Ctrl(std::string name, std::string subsystem) {
  RawController c;
  c.name = std::move(name);
  c.subsystem = std::move(subsystem);
  c.transport = "tcp";
  c.address = "traddr=10.0.0.1,trsvcid=4420";
  c.traddr = "10.0.0.1";
  c.trsvcid = "4420";
  c.state = "live";
  c.cntlid = std::string("1");
  c.numa_node = "0";
  c.queue_count = "5";
  return c;
}

RawPath PathOf(std::string name, std::string controller) {
  RawPath p;
  p.name = std::move(name);
  p.controller = std::move(controller);
  p.ana_state = "optimized";
  return p;
}

// One subsystem, two controllers, one head with a path on each: all
// attributes well formed.
RawTopology TwoPaths() {
  RawTopology raw;
  raw.subsystems.push_back({.name = "nvme-subsys0",
                            .nqn = "nqn.2014-08.org.example:t",
                            .iopolicy = std::string("numa"),
                            .model = std::string("Linux"),
                            .serial = std::string("abc")});
  raw.controllers.push_back(Ctrl("nvme1", "nvme-subsys0"));
  raw.controllers.push_back(Ctrl("nvme0", "nvme-subsys0"));
  raw.paths.push_back(PathOf("nvme0c1n1", "nvme1"));
  raw.paths.push_back(PathOf("nvme0c0n1", "nvme0"));
  raw.heads["nvme0n1"] = {.nsid = std::string("1"),
                          .dev = std::string("259:0")};
  return raw;
}

TEST(TopologyBuilder, BuildsJoinsAndSorts) {
  const BuiltTopology b = BuildTopology(TwoPaths());
  ASSERT_TRUE(b.status.ok()) << b.status;
  const model::Topology& t = b.topology;
  ASSERT_EQ(t.subsystems.size(), 1u);
  EXPECT_EQ(t.subsystems[0].iopolicy, model::Iopolicy::kNuma);
  EXPECT_EQ(t.subsystems[0].serial, "abc");
  ASSERT_EQ(t.controllers.size(), 2u);
  EXPECT_EQ(t.controllers[0].name, "nvme0");  // sorted, not scan order
  EXPECT_EQ(t.controllers[0].io_queues, 4u);  // queue_count minus admin
  EXPECT_EQ(t.controllers[0].numa_node, 0);
  EXPECT_EQ(t.controllers[0].cntlid, "1");
  ASSERT_EQ(t.paths.size(), 2u);
  EXPECT_EQ(t.paths[0].name, "nvme0c0n1");
  EXPECT_EQ(t.paths[0].head, "nvme0n1");
  EXPECT_EQ(t.paths[0].controller, "nvme0");
  EXPECT_EQ(t.paths[0].subsystem, "nvme-subsys0");
  EXPECT_EQ(t.paths[0].numa_node, 0);        // the controller's
  EXPECT_FALSE(t.paths[0].dev.has_value());  // no dev attribute: normal
  ASSERT_EQ(t.heads.size(), 1u);
  EXPECT_EQ(t.heads[0].name, "nvme0n1");
  EXPECT_EQ(t.heads[0].subsystem, "nvme-subsys0");
  EXPECT_EQ(t.heads[0].nsid, 1u);
  ASSERT_TRUE(t.heads[0].dev.has_value());
  EXPECT_EQ(*t.heads[0].dev, (model::DevId{259, 0}));
}

TEST(TopologyBuilder, SubsystemUnderSeveralHostsCountsOnce) {
  RawTopology raw = TwoPaths();
  RawSubsystem dup = raw.subsystems[0];
  dup.iopolicy = std::string("round-robin");
  raw.subsystems.push_back(dup);
  const BuiltTopology b = BuildTopology(raw);
  ASSERT_TRUE(b.status.ok()) << b.status;
  ASSERT_EQ(b.topology.subsystems.size(), 1u);
  EXPECT_EQ(b.topology.subsystems[0].iopolicy,
            model::Iopolicy::kNuma);  // the first
}

TEST(TopologyBuilder, ScanErrorsComeFirst) {
  RawTopology raw = TwoPaths();
  raw.scan_errors.push_back(absl::UnavailableError("class/nvme/nvme7: gone"));
  raw.controllers[0].queue_count = "many";
  const BuiltTopology b = BuildTopology(raw);
  EXPECT_THAT(b.status.message(), HasSubstr("class/nvme/nvme7: gone"));
  EXPECT_THAT(b.status.message(), HasSubstr("(and 1 more)"));
  EXPECT_EQ(b.topology.paths.size(), 2u);
}

TEST(TopologyBuilder, MalformedControllerValuesAreDroppedWithAnError) {
  RawTopology raw = TwoPaths();
  RawController& c = raw.controllers[1];  // nvme0
  c.cntlid = std::string("0x1");
  c.numa_node = "node0";
  c.queue_count = "-3";
  const BuiltTopology b = BuildTopology(raw);
  EXPECT_EQ(b.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(b.status.message(),
              HasSubstr("class/nvme/nvme0/cntlid: not an integer"));
  EXPECT_THAT(b.status.message(), HasSubstr("(and 2 more)"));
  const model::Controller& got = b.topology.controllers[0];
  ASSERT_EQ(got.name, "nvme0");
  EXPECT_EQ(got.cntlid, "");
  EXPECT_EQ(got.numa_node, -1);
  EXPECT_FALSE(got.io_queues.has_value());
  // The rest of the controller and its path are still there.
  EXPECT_EQ(got.transport, "tcp");
  EXPECT_EQ(b.topology.paths.size(), 2u);
}

TEST(TopologyBuilder, MissingAttributeNamesTheFile) {
  RawTopology raw = TwoPaths();
  raw.controllers[0].transport.reset();  // nvme1
  const BuiltTopology b = BuildTopology(raw);
  EXPECT_EQ(b.status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(b.status.message(),
            "class/nvme/nvme1/transport: missing or unreadable");
}

TEST(TopologyBuilder, UnreadableSysfsAttributeKeepsItsStatus) {
  RawTopology raw = TwoPaths();
  raw.subsystems[0].model =
      absl::PermissionDeniedError("class/nvme-subsystem/nvme-subsys0/model");
  const BuiltTopology b = BuildTopology(raw);
  EXPECT_EQ(b.status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(b.topology.subsystems[0].model, "");
  EXPECT_EQ(b.topology.subsystems[0].iopolicy, model::Iopolicy::kNuma);
}

TEST(TopologyBuilder, MalformedPathAndHeadValues) {
  RawTopology raw = TwoPaths();
  raw.paths[0].ana_state = "sideways";           // nvme0c1n1
  raw.paths[1].dev = RawAttr("259");             // nvme0c0n1: not major:minor
  raw.heads["nvme0n1"].nsid = std::string("0");  // not a namespace id
  raw.heads["nvme0n1"].dev = std::string("x:y");
  const BuiltTopology b = BuildTopology(raw);
  EXPECT_THAT(b.status.message(),
              HasSubstr("class/nvme/nvme1/nvme0c1n1/ana_state: unknown ANA "
                        "state \"sideways\""));
  EXPECT_THAT(b.status.message(), HasSubstr("(and 3 more)"));
  const model::Topology& t = b.topology;
  ASSERT_EQ(t.paths.size(), 2u);
  EXPECT_FALSE(t.paths[0].dev.has_value());
  // An unknown ANA state is kept verbatim beside kUnknown, not guessed.
  const model::Path* odd = t.FindPath("nvme0c1n1");
  ASSERT_NE(odd, nullptr);
  EXPECT_EQ(odd->ana_state, model::AnaState::kUnknown);
  EXPECT_EQ(odd->unknown_ana_state, "sideways");
  ASSERT_EQ(t.heads.size(), 1u);
  EXPECT_EQ(t.heads[0].nsid, 0u);
  EXPECT_FALSE(t.heads[0].dev.has_value());
}

TEST(TopologyBuilder, NonNumericHeadNsidIsAnError) {
  RawTopology raw = TwoPaths();
  raw.heads["nvme0n1"].nsid = std::string("one");
  const BuiltTopology b = BuildTopology(raw);
  EXPECT_EQ(b.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(b.status.message(), HasSubstr("block/nvme0n1/nsid: "));
  EXPECT_EQ(b.topology.heads[0].nsid, 0u);
}

TEST(TopologyBuilder, OldKernelPathDevIsParsed) {
  RawTopology raw = TwoPaths();
  raw.paths[1].dev = RawAttr("259:3");  // nvme0c0n1
  const BuiltTopology b = BuildTopology(raw);
  ASSERT_TRUE(b.status.ok()) << b.status;
  ASSERT_TRUE(b.topology.paths[0].dev.has_value());
  EXPECT_EQ(*b.topology.paths[0].dev, (model::DevId{259, 3}));
}

TEST(TopologyBuilder, PathWithUnplaceableNameIsLeftOut) {
  RawTopology raw = TwoPaths();
  raw.paths.push_back(PathOf("nvme0c1n1p1", "nvme1"));
  const BuiltTopology b = BuildTopology(raw);
  EXPECT_EQ(b.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(b.status.message(), HasSubstr("nvme0c1n1p1"));
  EXPECT_EQ(b.topology.paths.size(), 2u);
  EXPECT_EQ(b.topology.FindPath("nvme0c1n1p1"), nullptr);
}

TEST(TopologyBuilder, PathWhoseControllerVanishedIsLeftOutSilently) {
  RawTopology raw = TwoPaths();
  // Path nvme0c2n2 was walked, but its controller nvme2 is not in the scan
  // (it vanished between the walk and the reads); it was the only path of
  // head nvme0n2.
  raw.paths.push_back(PathOf("nvme0c2n2", "nvme2"));
  raw.heads["nvme0n2"] = {.nsid = std::string("2"),
                          .dev = std::string("259:5")};
  const BuiltTopology b = BuildTopology(raw);
  EXPECT_TRUE(b.status.ok()) << b.status;
  EXPECT_EQ(b.topology.FindPath("nvme0c2n2"), nullptr);
  EXPECT_EQ(b.topology.FindController("nvme2"), nullptr);
  ASSERT_EQ(b.topology.heads.size(), 1u);  // no head without a path
  EXPECT_EQ(b.topology.heads[0].name, "nvme0n1");
  EXPECT_EQ(b.topology.paths.size(), 2u);
}

TEST(TopologyBuilder, HeadNotScannedIsAnError) {
  RawTopology raw = TwoPaths();
  raw.heads.clear();
  const BuiltTopology b = BuildTopology(raw);
  EXPECT_EQ(b.status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(b.status.message(), HasSubstr("block/nvme0n1: not scanned"));
  ASSERT_EQ(b.topology.heads.size(), 1u);  // its paths still place it
  EXPECT_EQ(b.topology.heads[0].nsid, 0u);
}

TEST(TopologyBuilder, SubsystemWithoutControllersIsKept) {
  RawTopology raw = TwoPaths();
  raw.subsystems.push_back({.name = "nvme-subsys3"});
  const BuiltTopology b = BuildTopology(raw);
  ASSERT_TRUE(b.status.ok()) << b.status;
  ASSERT_EQ(b.topology.subsystems.size(), 2u);
  EXPECT_EQ(b.topology.subsystems[1].name, "nvme-subsys3");
}

TEST(TopologyBuilder, OutOfRangeNumbersAreErrorsNotTruncated) {
  // Each alone: the value is left out, with an error naming the file, the
  // value and the range.
  struct Case {
    std::function<void(RawTopology&)> set;
    std::string error;
  };
  const std::vector<Case> cases = {
      {[](RawTopology& r) {
         r.heads["nvme0n1"].nsid = std::string("4294967296");
       },
       "block/nvme0n1/nsid: out of range: 4294967296 (want 1..4294967294)"},
      {[](RawTopology& r) { r.heads["nvme0n1"].nsid = std::string("0"); },
       "block/nvme0n1/nsid: out of range: 0 (want 1..4294967294)"},
      {[](RawTopology& r) { r.controllers[1].queue_count = "1099511627776"; },
       "class/nvme/nvme0/queue_count: out of range: 1099511627776 (want "
       "0..65536)"},
      {[](RawTopology& r) { r.controllers[1].queue_count = "-3"; },
       "class/nvme/nvme0/queue_count: out of range: -3 (want 0..65536)"},
      {[](RawTopology& r) { r.controllers[1].numa_node = "4294967296"; },
       "class/nvme/nvme0/numa_node: out of range: 4294967296 (want "
       "-1..1023)"},
      {[](RawTopology& r) { r.controllers[1].numa_node = "-2"; },
       "class/nvme/nvme0/numa_node: out of range: -2 (want -1..1023)"},
      {[](RawTopology& r) { r.controllers[1].cntlid = std::string("65536"); },
       "class/nvme/nvme0/cntlid: out of range: 65536 (want 0..65535)"},
  };
  for (const Case& c : cases) {
    RawTopology raw = TwoPaths();
    c.set(raw);
    const BuiltTopology b = BuildTopology(raw);
    EXPECT_EQ(b.status.code(), absl::StatusCode::kOutOfRange) << c.error;
    EXPECT_EQ(b.status.message(), c.error);
    const model::Topology& t = b.topology;
    ASSERT_EQ(t.heads.size(), 1u);
    ASSERT_EQ(t.controllers.size(), 2u);
    ASSERT_EQ(t.paths.size(), 2u);  // the rest is still there
  }

  // All at once: none of them is truncated into a plausible value (2^32
  // into nsid 0 or node 0, 2^40 into 2^32 - 1 queues).
  RawTopology raw = TwoPaths();
  raw.heads["nvme0n1"].nsid = std::string("4294967296");
  raw.controllers[1].queue_count = "1099511627776";
  raw.controllers[1].numa_node = "4294967296";
  raw.controllers[1].cntlid = std::string("65536");
  const BuiltTopology b = BuildTopology(raw);
  EXPECT_THAT(b.status.message(), HasSubstr("(and 3 more)"));
  const model::Topology& t = b.topology;
  EXPECT_EQ(t.heads[0].nsid, 0u);  // 0: unknown
  const model::Controller* c = t.FindController("nvme0");
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->io_queues.has_value());
  EXPECT_EQ(c->numa_node, -1);
  EXPECT_EQ(c->cntlid, "");
  EXPECT_EQ(t.FindPath("nvme0c0n1")->numa_node, -1);
}

TEST(TopologyBuilder, RangeBoundsThemselvesAreAccepted) {
  RawTopology raw = TwoPaths();
  raw.heads["nvme0n1"].nsid = std::string("4294967294");
  raw.controllers[0].queue_count = "65536";
  raw.controllers[0].numa_node = "1023";
  raw.controllers[0].cntlid = std::string("65535");
  raw.controllers[1].queue_count = "0";
  raw.controllers[1].numa_node = "-1";
  raw.controllers[1].cntlid = std::string("0");
  const BuiltTopology b = BuildTopology(raw);
  ASSERT_TRUE(b.status.ok()) << b.status;
  const model::Topology& t = b.topology;
  EXPECT_EQ(t.heads[0].nsid, 4294967294u);
  EXPECT_EQ(t.FindController("nvme1")->io_queues, 65535u);
  EXPECT_EQ(t.FindController("nvme1")->numa_node, 1023);
  EXPECT_EQ(t.FindController("nvme1")->cntlid, "65535");
  EXPECT_EQ(t.FindController("nvme0")->io_queues, 0u);
  EXPECT_EQ(t.FindController("nvme0")->numa_node, -1);
  EXPECT_EQ(t.FindController("nvme0")->cntlid, "0");
}

TEST(TopologyBuilder, UnknownControllerStateIsAnErrorLikeAnUnknownAnaState) {
  // One rule for a state the agent does not know: an error of the
  // collector, the state kept verbatim beside kUnknown, the rest built.
  RawTopology raw = TwoPaths();
  raw.controllers[0].state = "frozen";  // nvme1
  BuiltTopology b = BuildTopology(raw);
  EXPECT_EQ(b.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(b.status.message(),
            "class/nvme/nvme1/state: unknown controller state \"frozen\"");
  const model::Controller* c = b.topology.FindController("nvme1");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->state, model::ControllerState::kUnknown);
  EXPECT_EQ(c->unknown_state, "frozen");
  EXPECT_EQ(b.topology.paths.size(), 2u);

  raw = TwoPaths();
  raw.paths[0].ana_state = "frozen";  // nvme0c1n1, on nvme1
  b = BuildTopology(raw);
  EXPECT_EQ(b.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(b.status.message(),
            "class/nvme/nvme1/nvme0c1n1/ana_state: unknown ANA state "
            "\"frozen\"");
  EXPECT_EQ(b.topology.paths.size(), 2u);
}

TEST(TopologyBuilder, EmptyScanIsAnEmptyTopology) {
  const BuiltTopology b = BuildTopology(RawTopology{});
  EXPECT_TRUE(b.status.ok());
  EXPECT_TRUE(b.topology.empty());
}

}  // namespace
}  // namespace pathwise::collectors

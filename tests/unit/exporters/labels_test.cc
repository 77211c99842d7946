// SPDX-License-Identifier: Apache-2.0
#include "exporters/labels.h"

#include <set>
#include <string>

#include "gtest/gtest.h"

namespace pathwise::exporters {
namespace {

template <typename E, size_t N, typename F>
std::set<std::string> Labels(const std::array<E, N>& all, F label) {
  std::set<std::string> out;
  for (E e : all) out.insert(std::string(label(e)));
  return out;
}

TEST(Labels, OpsAreTheMetricContractsNames) {
  EXPECT_EQ(Labels(model::kAllOps, OpLabel),
            (std::set<std::string>{"read", "write", "flush", "discard",
                                   "passthru", "other"}));
  // Every op is published, each once.
  EXPECT_EQ(Labels(kOpExportOrder, OpLabel).size(), model::kOpCount);
  EXPECT_EQ(OpLabel(kOpExportOrder[2]), "discard");
  EXPECT_EQ(OpLabel(kOpExportOrder[3]), "flush");
}

TEST(Labels, StateSets) {
  EXPECT_EQ(Labels(model::kAllPathHealth, PathHealthLabel),
            (std::set<std::string>{"healthy", "degraded", "failed", "idle"}));
  EXPECT_EQ(Labels(model::kAdvisedIopolicies, IopolicyLabel),
            (std::set<std::string>{"numa", "round-robin", "queue-depth"}));
  EXPECT_EQ(Labels(model::kAllAnaStates, AnaStateLabel),
            (std::set<std::string>{"optimized", "non-optimized", "inaccessible",
                                   "persistent-loss", "change"}));
  EXPECT_EQ(Labels(model::kControllerStateSet, ControllerStateLabel),
            (std::set<std::string>{"live", "connecting", "resetting",
                                   "deleting", "dead", "new"}));
  EXPECT_EQ(Labels(model::kAllOpGroups, OpGroupLabel),
            (std::set<std::string>{"read", "write", "other"}));
}

TEST(Labels, NvmeClassesAndDrops) {
  EXPECT_EQ(Labels(model::kNvmeErrorClasses, NvmeStatusClassLabel),
            (std::set<std::string>{"generic", "command_specific", "media",
                                   "path", "vendor", "reserved"}));
  EXPECT_EQ(NvmeStatusClassLabel(model::NvmeStatusClass::kSuccess), "success");
  EXPECT_EQ(
      Labels(model::kAllDropReasons, DropReasonLabel),
      (std::set<std::string>{"start_map_full", "no_start_time", "io_map_full",
                             "path_map_full", "recursion", "start_collision"}));
}

TEST(Labels, UnknownStatesShowTheKernelsString) {
  model::Controller c;
  EXPECT_EQ(ControllerStateText(c), "");
  c.unknown_state = "sideways";
  EXPECT_EQ(ControllerStateText(c), "sideways");
  c.state = model::ControllerState::kDeletingNoIo;
  c.unknown_state.clear();
  EXPECT_EQ(ControllerStateText(c), "deleting (no IO)");
  model::Path p;
  p.ana_state = model::AnaState::kChange;
  EXPECT_EQ(AnaStateText(p), "change");
  model::Subsystem s;
  s.unknown_iopolicy = "latency";
  EXPECT_EQ(IopolicyText(s), "latency");
}

}  // namespace
}  // namespace pathwise::exporters

// SPDX-License-Identifier: Apache-2.0
#include "collectors/kernel_strings.h"

#include "exporters/labels.h"
#include "gtest/gtest.h"

namespace pathwise::collectors {
namespace {

TEST(KernelStrings, KnownStatesRoundTripThroughTheLabels) {
  for (model::AnaState s : model::kAllAnaStates) {
    EXPECT_EQ(ParseAnaState(exporters::AnaStateLabel(s)), s);
  }
  for (model::Iopolicy p : model::kAdvisedIopolicies) {
    EXPECT_EQ(ParseIopolicy(exporters::IopolicyLabel(p)), p);
  }
  for (model::ControllerState s : model::kControllerStateSet) {
    EXPECT_EQ(ParseControllerState(exporters::ControllerStateLabel(s)), s);
  }
  EXPECT_EQ(ParseControllerState("deleting (no IO)"),
            model::ControllerState::kDeletingNoIo);
}

TEST(KernelStrings, UnknownStringsAreKeptVerbatim) {
  model::Path p;
  SetAnaState("sideways", p);
  EXPECT_EQ(p.ana_state, model::AnaState::kUnknown);
  EXPECT_EQ(p.unknown_ana_state, "sideways");
  SetAnaState("optimized", p);
  EXPECT_EQ(p.ana_state, model::AnaState::kOptimized);
  EXPECT_EQ(p.unknown_ana_state, "");
  SetAnaState("", p);  // not reported
  EXPECT_EQ(p.ana_state, model::AnaState::kUnknown);
  EXPECT_EQ(p.unknown_ana_state, "");

  model::Controller c;
  SetControllerState("unknown state", c);
  EXPECT_EQ(c.state, model::ControllerState::kUnknown);
  EXPECT_EQ(c.unknown_state, "unknown state");
  model::Subsystem s;
  SetIopolicy("latency", s);
  EXPECT_EQ(s.iopolicy, model::Iopolicy::kUnknown);
  EXPECT_EQ(s.unknown_iopolicy, "latency");
}

}  // namespace
}  // namespace pathwise::collectors

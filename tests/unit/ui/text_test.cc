// SPDX-License-Identifier: Apache-2.0
// ui/text and ui/frame_json: the frame's text at several widths and views,
// and its JSON, against golden files (tests/unit/golden/top.txt,
// top.json); the width contract on every width from 20 to 200.
#include "ui/text.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "exporters/topology_json.h"
#include "gtest/gtest.h"
#include "tests/unit/golden.h"
#include "tests/unit/ui/test_snapshots.h"
#include "ui/frame_json.h"
#include "ui/snapshot_json.h"

namespace pathwise::ui {
namespace {

Frame TestFrame(SortKey sort = SortKey::kName, const std::string& filter = "") {
  const auto [a, b] = testing::MakeSnapshotPair();
  Frame f = BuildFrame(&a, b);
  FilterFrame(f, filter);
  SortFrame(f, sort);
  return f;
}

std::string Section(const std::string& title, const Frame& f, TextOptions o) {
  o.source = "http://127.0.0.1:9877";
  return absl::StrCat("== ", title, "\n", RenderText(f, o));
}

TEST(TextTest, Golden) {
  std::string out;
  const Frame f = TestFrame();
  out += Section("paths, no width limit", f, {});
  out += Section("paths, 120 columns", f, {.width = 120});
  out += Section("paths, 80 columns", f, {.width = 80});
  out += Section("paths, 40 columns", f, {.width = 40});
  out += Section("paths, 12 columns: cut", f, {.width = 12});
  out += Section("paths sorted by read p99, flat", TestFrame(SortKey::kReadP99),
                 {.sort = SortKey::kReadP99});
  out += Section("filter c2", TestFrame(SortKey::kName, "c2"),
                 {.width = 100, .filter = "c2"});
  out += Section("controllers", f, {.view = View::kControllers});
  out += Section("controllers, 60 columns", f,
                 {.view = View::kControllers, .width = 60});
  out += Section("devices", f, {.view = View::kDevices});
  const auto [a, b] = testing::MakeSnapshotPair();
  out += Section("first snapshot: no interval", BuildFrame(nullptr, b), {});
  model::Snapshot empty;
  out += Section("no NVMe", BuildFrame(nullptr, empty), {});
  testing::ExpectMatchesGolden(out, "top.txt");
}

// An agent's snapshot of a host without NVMe, as `pathwise top --url` reads
// it: the title, then the notice of what was found (a normal line, not a
// failure), and no table rows.
TEST(TextTest, AHostWithoutMultipathSaysWhatWasFound) {
  model::Snapshot none;
  none.topology.subsystem_class = false;
  none.collectors = {{"nvme_topology", 0, true, ""}};
  absl::StatusOr<model::Snapshot> read = SnapshotFromJsonText(
      exporters::JsonText(exporters::SnapshotToJson(none)));
  ASSERT_TRUE(read.ok()) << read.status();
  const Frame f = BuildFrame(nullptr, *read);
  const std::vector<Line> lines = RenderLines(f, {});
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[1].text,
            "no NVMe multipath subsystems: is nvme_core loaded with "
            "multipath=Y? (no /sys/class/nvme-subsystem: nvme_core is not "
            "loaded)");
  EXPECT_EQ(lines[1].style, LineStyle::kNormal);
  EXPECT_EQ(FrameToJson(f, "test")["notice"], lines[1].text);
  // A multipath host has none.
  EXPECT_EQ(TestFrame().notice, "");
}

TEST(TextTest, EveryLineFitsTheWidth) {
  const Frame f = TestFrame();
  for (View v : {View::kPaths, View::kControllers, View::kDevices}) {
    for (int width = 1; width <= 200; ++width) {
      const std::string text = RenderText(f, {.view = v, .width = width});
      for (absl::string_view line : absl::StrSplit(text, '\n')) {
        EXPECT_LE(static_cast<int>(line.size()), width)
            << ViewName(v) << " at " << width << ": " << line;
      }
    }
  }
}

TEST(TextTest, NarrowKeepsTheMostImportantColumns) {
  const std::string text = RenderText(TestFrame(), {.width = 60});
  const std::vector<std::string> lines = absl::StrSplit(text, '\n');
  std::string header;
  for (const std::string& l : lines) {
    if (absl::StartsWith(l, "PATH")) header = l;
  }
  EXPECT_TRUE(absl::StrContains(header, "HEALTH"));
  EXPECT_TRUE(absl::StrContains(header, "ANA"));
  EXPECT_TRUE(absl::StrContains(header, "R-IOPS"));
  EXPECT_TRUE(absl::StrContains(header, "R-P99"));
  EXPECT_FALSE(absl::StrContains(header, "ADDRESS"));
  EXPECT_FALSE(absl::StrContains(header, "TRANSPORT"));
}

TEST(TextTest, KernelStringsCannotDriveTheTerminal) {
  auto [a, b] = testing::MakeSnapshotPair();
  b.topology.subsystems[0].nqn = "nqn\x1b[2J\xff";
  const std::string text = RenderText(BuildFrame(&a, b), {});
  EXPECT_FALSE(absl::StrContains(text, "\x1b"));
  EXPECT_TRUE(absl::StrContains(text, "nqn?[2J?"));
}

TEST(TextTest, LatencyFormat) {
  EXPECT_EQ(FormatLatency(std::nullopt), "-");
  EXPECT_EQ(FormatLatency(0.000042), "42us");
  EXPECT_EQ(FormatLatency(0.0009996), "1.00ms");
  EXPECT_EQ(FormatLatency(0.00123), "1.23ms");
  EXPECT_EQ(FormatLatency(0.0301), "30.1ms");
  EXPECT_EQ(FormatLatency(0.250), "250ms");
  EXPECT_EQ(FormatLatency(2.5), "2.50s");
  EXPECT_EQ(FormatLatency(std::nan("")), "-");
}

TEST(FrameJsonTest, Golden) {
  testing::ExpectMatchesGolden(
      exporters::JsonText(FrameToJson(TestFrame(), "http://127.0.0.1:9877")),
      "top.json");
}

}  // namespace
}  // namespace pathwise::ui

// SPDX-License-Identifier: Apache-2.0
// ui/top: what each key of the live view does, without a terminal.
#include "gtest/gtest.h"
#include "tests/unit/ui/test_snapshots.h"
#include "ui/top.h"

namespace pathwise::ui {
namespace {

void Type(ViewState& s, const std::string& keys) {
  for (char c : keys) HandleKey(s, c, 10);
}

TEST(TopStateTest, ViewsSortAndQuit) {
  TopOptions o;
  o.view = View::kControllers;
  o.sort = SortKey::kHealth;
  ViewState s = InitialState(o);
  EXPECT_EQ(s.view, View::kControllers);
  Type(s, "p");
  EXPECT_EQ(s.view, View::kPaths);
  Type(s, "d");
  EXPECT_EQ(s.view, View::kDevices);
  Type(s, "c");
  EXPECT_EQ(s.view, View::kControllers);
  Type(s, "s");
  EXPECT_EQ(s.sort, SortKey::kReadIops);
  Type(s, "SS");
  EXPECT_EQ(s.sort, SortKey::kName);
  Type(s, "S");
  EXPECT_EQ(s.sort, SortKey::kErrors);  // wraps around
  for (size_t i = 0; i < kAllSortKeys.size(); ++i) Type(s, "s");
  EXPECT_EQ(s.sort, SortKey::kErrors);
  EXPECT_FALSE(s.quit);
  Type(s, "q");
  EXPECT_TRUE(s.quit);
}

TEST(TopStateTest, FilterEditing) {
  ViewState s;
  Type(s, "/c2q");  // q is text while editing
  EXPECT_TRUE(s.editing);
  EXPECT_FALSE(s.quit);
  EXPECT_EQ(StatusLine(s), "filter: c2q_");
  HandleKey(s, kKeyBackspace, 10);
  EXPECT_EQ(s.filter, "");
  HandleKey(s, kKeyEnter, 10);
  EXPECT_FALSE(s.editing);
  EXPECT_EQ(s.filter, "c2");
  Type(s, "/x");
  HandleKey(s, kKeyEscape, 10);  // cancels: the old filter stays
  EXPECT_EQ(s.filter, "c2");
  Type(s, "/");
  EXPECT_EQ(s.edit, "c2");  // editing starts from the current filter
  HandleKey(s, 127, 10);
  HandleKey(s, 127, 10);
  HandleKey(s, 127, 10);
  HandleKey(s, '\n', 10);
  EXPECT_EQ(s.filter, "");
}

TEST(TopStateTest, Scrolling) {
  ViewState s;
  HandleKey(s, kKeyDown, 10);
  HandleKey(s, kKeyDown, 10);
  EXPECT_EQ(s.scroll, 2);
  HandleKey(s, kKeyPageUp, 10);
  EXPECT_EQ(s.scroll, 0);
  HandleKey(s, kKeyPageDown, 10);
  EXPECT_EQ(s.scroll, 10);
  HandleKey(s, kKeyHome, 10);
  EXPECT_EQ(s.scroll, 0);
  HandleKey(s, kKeyUp, 10);
  EXPECT_EQ(s.scroll, 0);
  Type(s, "ss");  // a new order starts at the top
  EXPECT_EQ(s.scroll, 0);
}

TEST(TopStateTest, SnapshotPairKeepsTheLastRealInterval) {
  const auto [a, b] = testing::MakeSnapshotPair();
  auto pa = std::make_shared<const model::Snapshot>(a);
  auto pb = std::make_shared<const model::Snapshot>(b);
  SnapshotPair pair;
  pair.Push(pa);
  EXPECT_FALSE(pair.complete());
  pair.Push(pa);  // polled again before the agent collected
  EXPECT_FALSE(pair.complete());
  pair.Push(pb);
  ASSERT_TRUE(pair.complete());
  pair.Push(pb);
  EXPECT_EQ(pair.earlier(), pa.get());
  EXPECT_EQ(pair.now(), pb.get());
  ViewState s;
  s.filter = "c0";
  const Frame f = MakeFrame(pair, s);
  ASSERT_EQ(f.paths.size(), 1u);
  EXPECT_DOUBLE_EQ(f.paths[0].read.iops, 1000);
  // An agent restarted: older collected_at, start over.
  pair.Push(pa);
  EXPECT_FALSE(pair.complete());
  EXPECT_EQ(pair.now(), pa.get());
}

TEST(TopStateTest, SnapshotUrl) {
  EXPECT_EQ(*SnapshotUrl("http://127.0.0.1:9877"),
            "http://127.0.0.1:9877/api/v1/snapshot");
  EXPECT_EQ(*SnapshotUrl("https://u:p@host:9877/"),
            "https://u:p@host:9877/api/v1/snapshot");
  EXPECT_EQ(*SnapshotUrl("http://h/prefix/api/v1/snapshot"),
            "http://h/prefix/api/v1/snapshot");
  EXPECT_EQ(
      SnapshotUrl("127.0.0.1:9877").status().message(),
      "invalid value \"127.0.0.1:9877\" for --url: want http://HOST[:PORT] "
      "or https://HOST[:PORT]");
  EXPECT_EQ(SnapshotUrl("http://:9877").status().message(),
            "invalid value \"http://:9877\" for --url: no host");
  EXPECT_EQ(SnapshotUrl("http://a b").status().message(),
            "invalid value \"http://a b\" for --url: blanks or control "
            "characters");
}

}  // namespace
}  // namespace pathwise::ui

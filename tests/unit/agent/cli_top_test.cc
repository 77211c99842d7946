// SPDX-License-Identifier: Apache-2.0
// `pathwise top`'s flags: defaults, values, bad values, and which flags
// belong to it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/cli.h"

namespace pathwise::agent {
namespace {

absl::StatusOr<Options> P(const std::vector<std::string>& args) {
  return ParseArgs(args);
}

TEST(CliTopTest, Defaults) {
  absl::StatusOr<Options> o = P({"top"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->command, Command::kTop);
  EXPECT_EQ(o->top.url, "http://127.0.0.1:9877");
  EXPECT_FALSE(o->top.url_given);
  EXPECT_FALSE(o->top.once);
  EXPECT_EQ(o->top.format, "text");
  EXPECT_EQ(o->top.interval, absl::Seconds(1));
  EXPECT_EQ(o->top.sort, ui::SortKey::kName);
  EXPECT_EQ(o->top.view, ui::View::kPaths);
  EXPECT_EQ(o->top.width, 0);
  EXPECT_EQ(o->sysfs_root, "/sys");
  EXPECT_EQ(o->bpf, BpfMode::kAuto);
}

TEST(CliTopTest, Values) {
  absl::StatusOr<Options> o =
      P({"top", "--url=https://u:p@node:9877", "--once", "--format=json",
         "--interval=2s", "--sort=rp99", "--filter=c1", "--view=controllers",
         "--width=80", "--bpf=off", "--path.sysfs=/tmp/sys"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->top.url, "https://u:p@node:9877");
  EXPECT_TRUE(o->top.url_given);
  EXPECT_TRUE(o->top.once);
  EXPECT_EQ(o->top.format, "json");
  EXPECT_EQ(o->top.interval, absl::Seconds(2));
  EXPECT_EQ(o->top.sort, ui::SortKey::kReadP99);
  EXPECT_EQ(o->top.filter, "c1");
  EXPECT_EQ(o->top.view, ui::View::kControllers);
  EXPECT_EQ(o->top.width, 80);
  EXPECT_EQ(o->bpf, BpfMode::kOff);
  EXPECT_EQ(o->sysfs_root, "/tmp/sys");
  // The default URL given explicitly is given: it must answer.
  o = P({"top", "--url=http://127.0.0.1:9877"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_TRUE(o->top.url_given);
}

TEST(CliTopTest, BadValuesAreOneLineUsageErrors) {
  EXPECT_EQ(P({"top", "--url=node:9877"}).status().message(),
            "invalid value \"node:9877\" for --url: want http://HOST[:PORT] "
            "or https://HOST[:PORT]");
  EXPECT_EQ(P({"top", "--sort=speed"}).status().message(),
            "invalid value \"speed\" for --sort: want name, health, riops, "
            "wiops, rp99, wp99, ewma or errors");
  EXPECT_EQ(P({"top", "--view=queues"}).status().message(),
            "invalid value \"queues\" for --view: want paths, controllers or "
            "devices");
  EXPECT_EQ(P({"top", "--width=-1"}).status().message(),
            "invalid value \"-1\" for --width: must be >= 0");
  EXPECT_EQ(P({"top", "--interval=0s"}).status().message(),
            "invalid value \"0s\" for --interval: must be positive");
  EXPECT_EQ(
      P({"top", "--format=prometheus"}).status().message(),
      "invalid value \"prometheus\" for --format: top wants text or json");
  EXPECT_EQ(P({"top", "--web.listen-address=:1"}).status().message(),
            "flag --web.listen-address does not apply to 'pathwise top' "
            "(see 'pathwise top --help')");
  EXPECT_EQ(P({"serve", "--url=http://x"}).status().message(),
            "flag --url does not apply to 'pathwise serve' "
            "(see 'pathwise serve --help')");
}

}  // namespace
}  // namespace pathwise::agent

// --histogram_buckets: coarse by default, fine on request, for serve and
// snapshot; anything else is a one-line usage error; topology has no such
// flag.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/cli.h"

namespace pathwise::agent {
namespace {

using exporters::HistogramBuckets;

TEST(CliHistogramFlagsTest, CoarseByDefaultFineOnRequest) {
  absl::StatusOr<Options> o = ParseArgs({});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->histogram_buckets, HistogramBuckets::kCoarse);
  for (const char* command : {"serve", "snapshot"}) {
    o = ParseArgs({command, "--histogram_buckets=fine"});
    ASSERT_TRUE(o.ok()) << o.status();
    EXPECT_EQ(o->histogram_buckets, HistogramBuckets::kFine) << command;
    o = ParseArgs({command, "--histogram_buckets=coarse"});
    ASSERT_TRUE(o.ok()) << o.status();
    EXPECT_EQ(o->histogram_buckets, HistogramBuckets::kCoarse) << command;
  }
}

TEST(CliHistogramFlagsTest, BadValueIsAOneLineUsageError) {
  EXPECT_EQ(ParseArgs({"--histogram_buckets=native"}).status().message(),
            "invalid value \"native\" for --histogram_buckets: want coarse or "
            "fine");
  EXPECT_FALSE(ParseArgs({"topology", "--histogram_buckets=fine"}).ok());
}

}  // namespace
}  // namespace pathwise::agent

// SPDX-License-Identifier: Apache-2.0
// --histogram-buckets and --metrics.profile for serve and snapshot: the
// default profile with its sparse buckets unless told otherwise, full with
// today's coarse ones; anything else is a one-line usage error; topology has
// no such flags.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/cli.h"

namespace pathwise::agent {
namespace {

using exporters::HistogramBuckets;
using exporters::MetricsProfile;

TEST(CliHistogramFlagsTest, TheProfilesBucketsUnlessGiven) {
  absl::StatusOr<Options> o = ParseArgs({});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->metrics_profile, MetricsProfile::kDefault);
  EXPECT_FALSE(o->histogram_buckets.has_value());
  EXPECT_EQ(ExpositionOf(*o).histogram_buckets, HistogramBuckets::kSparse);
  EXPECT_EQ(ExpositionOf(*o).profile, MetricsProfile::kDefault);
  for (const char* command : {"serve", "snapshot"}) {
    o = ParseArgs({command, "--histogram-buckets=fine"});
    ASSERT_TRUE(o.ok()) << o.status();
    EXPECT_EQ(ExpositionOf(*o).histogram_buckets, HistogramBuckets::kFine)
        << command;
    o = ParseArgs({command, "--histogram-buckets=coarse"});
    ASSERT_TRUE(o.ok()) << o.status();
    EXPECT_EQ(ExpositionOf(*o).histogram_buckets, HistogramBuckets::kCoarse)
        << command;
    o = ParseArgs({command, "--metrics.profile=full"});
    ASSERT_TRUE(o.ok()) << o.status();
    EXPECT_EQ(ExpositionOf(*o).profile, MetricsProfile::kFull) << command;
    EXPECT_EQ(ExpositionOf(*o).histogram_buckets, HistogramBuckets::kCoarse)
        << command;
    o = ParseArgs(
        {command, "--metrics.profile=full", "--histogram-buckets=sparse"});
    ASSERT_TRUE(o.ok()) << o.status();
    EXPECT_EQ(ExpositionOf(*o).histogram_buckets, HistogramBuckets::kSparse)
        << command;
    o = ParseArgs({command, "--metrics.profile=default"});
    ASSERT_TRUE(o.ok()) << o.status();
    EXPECT_EQ(ExpositionOf(*o).profile, MetricsProfile::kDefault) << command;
  }
}

TEST(CliHistogramFlagsTest, BadValueIsAOneLineUsageError) {
  EXPECT_EQ(ParseArgs({"--histogram-buckets=native"}).status().message(),
            "invalid value \"native\" for --histogram-buckets: want sparse, "
            "coarse or fine");
  EXPECT_EQ(ParseArgs({"--metrics.profile=small"}).status().message(),
            "invalid value \"small\" for --metrics.profile: want default or "
            "full");
  EXPECT_FALSE(ParseArgs({"topology", "--histogram-buckets=fine"}).ok());
  EXPECT_FALSE(ParseArgs({"topology", "--metrics.profile=full"}).ok());
}

}  // namespace
}  // namespace pathwise::agent

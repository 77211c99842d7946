// The datapath's failure decisions (failover.h) and the paths' shared
// state (path_state.h), on a fake clock.
#include "datapath/failover.h"

#include <cerrno>

#include "datapath/path_state.h"
#include "gtest/gtest.h"

namespace pathwise::datapath {
namespace {

using Kind = Disposition::Kind;

TEST(DecideCompletionTest, SuccessCompletesWithTheGivenResult) {
  const Disposition d = DecideCompletion(0, 4096);
  EXPECT_EQ(d.kind, Kind::kComplete);
  EXPECT_EQ(d.result, 4096);
  // Only CRD/More/DNR bits, SCT and SC 0: still a success.
  EXPECT_EQ(DecideCompletion(0x4000, 0).kind, Kind::kComplete);
}

TEST(DecideCompletionTest, PathErrorsFailOverAndMarkThePath) {
  for (int32_t status :
       {0x370 /* host path error */, 0x371 /* aborted by host */,
        0x300 /* internal path error */}) {
    const Disposition d = DecideCompletion(status, 4096);
    EXPECT_EQ(d.kind, Kind::kFailover) << status;
    EXPECT_TRUE(d.path_failed);
    EXPECT_FALSE(d.ana_error);
    EXPECT_EQ(d.status_class, model::NvmeStatusClass::kPath);
  }
}

TEST(DecideCompletionTest, AnaErrorsFailOverAndAskForTheLog) {
  for (int32_t status : {0x301, 0x302, 0x303}) {
    const Disposition d = DecideCompletion(status, 0);
    EXPECT_EQ(d.kind, Kind::kFailover) << status;
    EXPECT_TRUE(d.ana_error) << status;
  }
}

TEST(DecideCompletionTest, DoNotRetryWinsOverAPathStatus) {
  const Disposition d = DecideCompletion(0x4000 | 0x302, 0);
  EXPECT_EQ(d.kind, Kind::kFail);
  EXPECT_EQ(d.result, -EIO);
}

TEST(DecideCompletionTest, OtherStatusesGoToTheApplication) {
  EXPECT_EQ(DecideCompletion(0x281 /* unrecovered read error */, 0).kind,
            Kind::kFail);
  EXPECT_EQ(DecideCompletion(0x281, 0).result, -EIO);
  EXPECT_EQ(DecideCompletion(0x002, 0).result, -EOPNOTSUPP);
  EXPECT_EQ(DecideCompletion(0x181, 0).result, -ENOSPC);
  EXPECT_EQ(DecideCompletion(0x281, 0).status_class,
            model::NvmeStatusClass::kMedia);
}

TEST(DecideCompletionTest, TransportErrnosFailOver) {
  for (int e :
       {EIO, ENOTCONN, ECANCELED, EINTR, ECONNRESET, ENODEV, ETIMEDOUT}) {
    const Disposition d = DecideCompletion(-e, 0);
    EXPECT_EQ(d.kind, Kind::kFailover) << e;
    EXPECT_TRUE(d.path_failed) << e;
  }
}

TEST(DecideCompletionTest, CommandErrnosFailAndRefusalsRetry) {
  EXPECT_EQ(DecideCompletion(-EINVAL, 0).kind, Kind::kFail);
  EXPECT_EQ(DecideCompletion(-EINVAL, 0).result, -EINVAL);
  EXPECT_EQ(DecideCompletion(-EFAULT, 0).result, -EFAULT);
  const Disposition again = DecideCompletion(-EAGAIN, 0);
  EXPECT_EQ(again.kind, Kind::kRetry);
  EXPECT_FALSE(again.path_failed);
}

TEST(PathHealthTest, BacksOffProbesAndRecovers) {
  RetryPolicy p;
  p.backoff_initial_ns = 100;
  p.backoff_max_ns = 350;
  PathHealth h(p);
  EXPECT_FALSE(h.failed());
  EXPECT_TRUE(h.OnFailure(1000));
  EXPECT_FALSE(h.OnFailure(1001));  // already failed
  EXPECT_FALSE(h.ProbeDue(1099));
  EXPECT_TRUE(h.ProbeDue(1100));
  h.OnProbeStart();
  EXPECT_FALSE(h.ProbeDue(5000));  // one probe at a time
  EXPECT_FALSE(h.OnProbeResult(false, 1200));
  EXPECT_EQ(h.backoff_ns(), 200);
  EXPECT_EQ(h.retry_at_ns(), 1400);
  h.OnProbeStart();
  h.OnProbeResult(false, 1400);
  EXPECT_EQ(h.backoff_ns(), 350);  // capped
  h.OnProbeStart();
  EXPECT_TRUE(h.OnProbeResult(true, 1800));
  EXPECT_FALSE(h.failed());
  // A new failure starts from the initial back-off again.
  EXPECT_TRUE(h.OnFailure(2000));
  EXPECT_EQ(h.retry_at_ns(), 2100);
}

TEST(PathStatesTest, FailuresAndAnaStatesShapeTheSelectorsView) {
  PathStates paths(3, RetryPolicy{.backoff_initial_ns = 10});
  const uint64_t g0 = paths.generation();
  std::vector<policy::PathInfo> infos = paths.Infos();
  ASSERT_EQ(infos.size(), 3u);
  for (const auto& i : infos) {
    EXPECT_TRUE(i.usable);
    EXPECT_TRUE(i.optimized);  // no ANA yet: every path optimized
  }
  paths.OnFailure(0, 100);
  EXPECT_GT(paths.generation(), g0);
  EXPECT_TRUE(paths.AnyFailed());
  EXPECT_FALSE(paths.Infos()[0].usable);
  const uint64_t g1 = paths.generation();
  paths.OnFailure(0, 101);  // no change
  EXPECT_EQ(paths.generation(), g1);

  paths.SetAnaState(1, model::AnaState::kNonOptimized);
  paths.SetAnaState(2, model::AnaState::kInaccessible);
  infos = paths.Infos();
  EXPECT_TRUE(infos[1].usable);
  EXPECT_FALSE(infos[1].optimized);
  EXPECT_FALSE(infos[2].usable);
  EXPECT_TRUE(paths.AnyUsable());
  EXPECT_FALSE(paths.Get(2).usable());

  EXPECT_FALSE(paths.ClaimProbe(0, 105));  // back-off not over
  EXPECT_TRUE(paths.ClaimProbe(0, 110));
  EXPECT_FALSE(paths.ClaimProbe(0, 110));  // claimed once
  paths.OnProbeResult(0, true, 111);
  EXPECT_FALSE(paths.AnyFailed());
  EXPECT_TRUE(paths.Infos()[0].usable);
}

TEST(PathStatesTest, AnaErrorsReachTheHandler) {
  PathStates paths(2, RetryPolicy{});
  int reported = -1;
  paths.SetAnaErrorHandler([&](int p) { reported = p; });
  paths.ReportAnaError(1);
  EXPECT_EQ(reported, 1);
}

}  // namespace
}  // namespace pathwise::datapath

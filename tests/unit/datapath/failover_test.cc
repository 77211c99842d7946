// SPDX-License-Identifier: Apache-2.0
// The datapath's failure decisions (failover.h) and the paths' shared
// state (path_state.h), on a fake clock.
#include "datapath/failover.h"

#include <cerrno>
#include <vector>

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

TEST(DecideCompletionTest, AuthenticationRequiredFailsOver) {
  const Disposition d = DecideCompletion(0x191, 0);
  EXPECT_EQ(d.kind, Kind::kFailover);
  EXPECT_TRUE(d.path_failed);
}

// An ANA status moves the I/O but does not fail the path: the ANA state,
// read again, decides whether the path takes I/O.
TEST(DecideCompletionTest, AnaErrorsFailOverWithoutFailingThePath) {
  for (int32_t status : {0x301, 0x302, 0x303, 0x302 | 0x1800}) {
    const Disposition d = DecideCompletion(status, 0);
    EXPECT_EQ(d.kind, Kind::kFailover) << status;
    EXPECT_TRUE(d.ana_error) << status;
    EXPECT_FALSE(d.path_failed) << status;
    EXPECT_EQ(d.result, -EIO) << status;
  }
}

TEST(DecideCompletionTest, DoNotRetryWinsOverAPathStatus) {
  const Disposition d = DecideCompletion(0x4000 | 0x302, 0);
  EXPECT_EQ(d.kind, Kind::kFail);
  EXPECT_EQ(d.result, -EIO);
  EXPECT_FALSE(d.ana_error);
}

// The controller answered: the command goes to the same path again, and
// the status's errno is what the application gets if the retries run out.
TEST(DecideCompletionTest, OtherStatusesRetryOnTheSamePath) {
  const Disposition media = DecideCompletion(0x281, 0);
  EXPECT_EQ(media.kind, Kind::kRetry);
  EXPECT_FALSE(media.path_failed);
  EXPECT_EQ(media.result, -EIO);
  EXPECT_EQ(media.status_class, model::NvmeStatusClass::kMedia);
  EXPECT_EQ(DecideCompletion(0x002, 0).kind, Kind::kRetry);
  EXPECT_EQ(DecideCompletion(0x002, 0).result, -EOPNOTSUPP);
  EXPECT_EQ(DecideCompletion(0x181, 0).result, -ENOSPC);
}

TEST(DecideCompletionTest, DoNotRetryStatusesGoToTheApplication) {
  EXPECT_EQ(DecideCompletion(0x4281, 0).kind, Kind::kFail);
  EXPECT_EQ(DecideCompletion(0x4281, 0).result, -EIO);
  EXPECT_EQ(DecideCompletion(0x4002, 0).result, -EOPNOTSUPP);
  EXPECT_EQ(DecideCompletion(0x4181, 0).result, -ENOSPC);
  EXPECT_EQ(DecideCompletion(0x4281, 0).status_class,
            model::NvmeStatusClass::kMedia);
}

TEST(DecideCompletionTest, TransportErrnosFailOver) {
  for (int e : {EIO, ENOTCONN, ECANCELED, EINTR, ECONNRESET, ENODEV, ETIMEDOUT,
                ENXIO, EBADF}) {
    const Disposition d = DecideCompletion(-e, 0);
    EXPECT_EQ(d.kind, Kind::kFailover) << e;
    EXPECT_TRUE(d.path_failed) << e;
    EXPECT_FALSE(d.ana_error) << e;
  }
}

TEST(DecideCompletionTest, CommandErrnosFailAndRefusalsRetry) {
  EXPECT_EQ(DecideCompletion(-EINVAL, 0).kind, Kind::kFail);
  EXPECT_EQ(DecideCompletion(-EINVAL, 0).result, -EINVAL);
  EXPECT_EQ(DecideCompletion(-EFAULT, 0).result, -EFAULT);
  EXPECT_EQ(DecideCompletion(-EOPNOTSUPP, 0).result, -EOPNOTSUPP);
  for (int e : {EAGAIN, EBUSY, ENOMEM}) {
    const Disposition again = DecideCompletion(-e, 0);
    EXPECT_EQ(again.kind, Kind::kRetry) << e;
    EXPECT_FALSE(again.path_failed) << e;
    EXPECT_EQ(again.result, -EIO) << e;
  }
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

// An ANA status takes the path out of use until its state is read again
// (and asks the handler for that read); the read ends it either way.
TEST(PathStatesTest, AnaErrorsHoldThePathUntilTheStateIsRead) {
  PathStates paths(2, RetryPolicy{.backoff_initial_ns = 10});
  std::vector<int> reported;
  paths.SetAnaErrorHandler([&](int p) { reported.push_back(p); });
  const uint64_t g0 = paths.generation();
  paths.OnAnaError(1, 100);
  EXPECT_EQ(reported, std::vector<int>{1});
  EXPECT_GT(paths.generation(), g0);
  EXPECT_TRUE(paths.Get(1).ana_pending);
  EXPECT_FALSE(paths.Get(1).failed);
  EXPECT_FALSE(paths.Get(1).usable());
  EXPECT_FALSE(paths.Infos()[1].usable);
  EXPECT_TRUE(paths.Infos()[0].usable);
  EXPECT_FALSE(paths.AnyFailed());  // no probes for it

  // The state read is optimized, as before: usable again.
  paths.SetAnaState(1, model::AnaState::kUnknown);
  EXPECT_FALSE(paths.Get(1).ana_pending);
  EXPECT_TRUE(paths.Infos()[1].usable);

  // Read as inaccessible: out of use by its state, not failed.
  paths.OnAnaError(1, 200);
  paths.SetAnaState(1, model::AnaState::kInaccessible);
  EXPECT_FALSE(paths.Get(1).ana_pending);
  EXPECT_FALSE(paths.Get(1).failed);
  EXPECT_FALSE(paths.Infos()[1].usable);
  paths.SetAnaState(1, model::AnaState::kOptimized);
  EXPECT_TRUE(paths.Infos()[1].usable);

  // A read that failed: probes take over.
  paths.OnAnaReadFailed(0, 300);  // nothing pending: no change
  EXPECT_FALSE(paths.Get(0).failed);
  paths.OnAnaError(0, 300);
  paths.OnAnaReadFailed(0, 301);
  EXPECT_FALSE(paths.Get(0).ana_pending);
  EXPECT_TRUE(paths.Get(0).failed);
  EXPECT_TRUE(paths.AnyFailed());
  EXPECT_TRUE(paths.ClaimProbe(0, 311));
}

// With nobody to read the state, an ANA status fails the path like any
// path error.
TEST(PathStatesTest, AnaErrorsWithoutAHandlerFailThePath) {
  PathStates paths(2, RetryPolicy{});
  paths.OnAnaError(0, 100);
  EXPECT_TRUE(paths.Get(0).failed);
  EXPECT_FALSE(paths.Get(0).ana_pending);
}

// The Command Retry Delay field reaches the queue with every decision that
// sends the I/O again, and with none that does not.
TEST(DecideCompletionTest, CommandRetryDelayOfResubmissions) {
  // Media error, retried on the same path: CRD 2.
  Disposition d = DecideCompletion(0x0281 | 0x1000, 4096);
  EXPECT_EQ(d.kind, Kind::kRetry);
  EXPECT_EQ(d.crd, 2);
  // Host pathing error, failed over: CRD 1.
  d = DecideCompletion(0x0370 | 0x0800, 4096);
  EXPECT_EQ(d.kind, Kind::kFailover);
  EXPECT_EQ(d.crd, 1);
  // ANA inaccessible: CRD 3.
  d = DecideCompletion(0x0302 | 0x1800, 4096);
  EXPECT_TRUE(d.ana_error);
  EXPECT_EQ(d.crd, 3);
  // Without CRD: none.
  EXPECT_EQ(DecideCompletion(0x0281, 4096).crd, 0);
  // Do Not Retry: nothing goes again, so nothing waits.
  d = DecideCompletion(0x0281 | 0x1000 | 0x4000, 4096);
  EXPECT_EQ(d.kind, Kind::kFail);
  EXPECT_EQ(d.crd, 0);
  // An errno has no status field.
  EXPECT_EQ(DecideCompletion(-EAGAIN, 4096).crd, 0);
}

// Which completions leave a write the failed path may still execute.
TEST(WriteFenceTest, CutOffByPathFailure) {
  EXPECT_TRUE(CutOffByPathFailure(DecideCompletion(-EINTR, 0)));
  EXPECT_TRUE(CutOffByPathFailure(DecideCompletion(-ENOTCONN, 0)));
  EXPECT_TRUE(CutOffByPathFailure(DecideCompletion(0x370, 0)));
  EXPECT_TRUE(CutOffByPathFailure(DecideCompletion(0x371, 0)));
  EXPECT_FALSE(CutOffByPathFailure(DecideCompletion(0, 0)));
  EXPECT_FALSE(CutOffByPathFailure(DecideCompletion(0x302, 0)));  // ANA
  EXPECT_FALSE(CutOffByPathFailure(DecideCompletion(0x281, 0)));  // media
  EXPECT_FALSE(CutOffByPathFailure(DecideCompletion(-EAGAIN, 0)));
  EXPECT_FALSE(CutOffByPathFailure(DecideCompletion(0x4281, 0)));  // DNR
}

TEST(WriteFenceTest, KatoPlusCqtOnFabricsCqtOnPcie) {
  constexpr int64_t kS = 1'000'000'000;
  EXPECT_EQ(WriteFenceNs(true, 10 * kS, 0), 10 * kS);
  EXPECT_EQ(WriteFenceNs(true, 10 * kS, 1500), 10 * kS + 1500'000'000);
  EXPECT_EQ(WriteFenceNs(true, -1, 0), 5 * kS);  // KATO unknown
  EXPECT_EQ(WriteFenceNs(false, 10 * kS, 0), 0);
  EXPECT_EQ(WriteFenceNs(false, -1, 250), 250'000'000);
}

// A dead server's command lives until the queue's timeout ends it, then
// may be executed up to the fence: --recover holds for both. Even on PCIe
// with no CQT (fence 0) the command may still be out until the timeout.
TEST(RecoveryHoldTest, TheQueueTimeoutThenTheFence) {
  constexpr int64_t kS = 1'000'000'000;
  EXPECT_EQ(RecoveryHoldNs(30 * kS, 5 * kS), 35 * kS);
  EXPECT_EQ(RecoveryHoldNs(5 * kS, 5 * kS), 10 * kS);
  EXPECT_EQ(RecoveryHoldNs(30 * kS, 0), 30 * kS);
  EXPECT_EQ(RecoveryHoldNs(-1, 5 * kS), 35 * kS);  // timeout unknown: 30 s
}

}  // namespace
}  // namespace pathwise::datapath

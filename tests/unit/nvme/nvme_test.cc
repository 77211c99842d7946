// SPDX-License-Identifier: Apache-2.0
// nvme/: status decoding (against the eBPF sampler's classes), the
// Identify Controller builder, and the io_uring ring on the host's kernel
// (no NVMe device needed: no-ops, an eventfd, and a passthru command on a
// pipe, which has no passthru and which the kernel must refuse).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <thread>

#include "bpf/status.h"
#include "nvme/admin.h"
#include "nvme/status.h"
#include "nvme/uring.h"
#include "tests/unit/refuse_enters.h"

namespace pathwise::nvme {
namespace {

using C = model::NvmeStatusClass;
using Kind = PassthruResult::Kind;

TEST(StatusClassTest, ByStatusCodeType) {
  EXPECT_EQ(StatusClass(0), C::kSuccess);
  EXPECT_EQ(StatusClass(0x0002), C::kGeneric);          // invalid field
  EXPECT_EQ(StatusClass(0x0106), C::kCommandSpecific);  // SCT 1
  EXPECT_EQ(StatusClass(0x0281), C::kMedia);
  EXPECT_EQ(StatusClass(0x0370), C::kPath);  // host pathing error
  EXPECT_EQ(StatusClass(0x0371), C::kPath);  // host aborted
  EXPECT_EQ(StatusClass(0x0401), C::kReserved);
  EXPECT_EQ(StatusClass(0x07ff), C::kVendor);
  // DNR, More and CRD are not part of the class.
  EXPECT_EQ(StatusClass(0x4002), C::kGeneric);
  EXPECT_EQ(StatusClass(0x7800), C::kSuccess);
}

TEST(StatusClassTest, AgreesWithTheSamplersClassesForEveryStatus) {
  for (uint32_t s = 0; s <= 0x7fff; ++s) {
    ASSERT_EQ(StatusClass(static_cast<uint16_t>(s)),
              bpf::ClassifyNvmeStatus(static_cast<uint16_t>(s)))
        << "status 0x" << std::hex << s;
  }
}

TEST(PassthruResultTest, SuccessStatusOrErrno) {
  EXPECT_EQ(DecodePassthruResult(0).kind, Kind::kSuccess);
  const PassthruResult path = DecodePassthruResult(0x370);
  EXPECT_EQ(path.kind, Kind::kNvmeStatus);
  EXPECT_EQ(path.status, 0x370);
  EXPECT_EQ(path.status_class, C::kPath);
  const PassthruResult intr = DecodePassthruResult(-EINTR);
  EXPECT_EQ(intr.kind, Kind::kErrno);
  EXPECT_EQ(intr.error, EINTR);
  // Only DNR set: the command succeeded.
  EXPECT_EQ(DecodePassthruResult(0x4000).kind, Kind::kSuccess);
}

TEST(AdminTest, IdentifyControllerIsCns1With4KiB) {
  alignas(4096) static char buf[kIdentifyDataBytes];
  const nvme_uring_cmd c = IdentifyController(buf);
  EXPECT_EQ(c.opcode, 0x06);
  EXPECT_EQ(c.cdw10, 0x01u);
  EXPECT_EQ(c.nsid, 0u);
  EXPECT_EQ(c.data_len, 4096u);
  EXPECT_EQ(c.addr, reinterpret_cast<uintptr_t>(buf));
  // No kernel timeout: it would reset the controller when it fired.
  EXPECT_EQ(c.timeout_ms, 0u);
  EXPECT_EQ(c.flags, 0);
  EXPECT_EQ(c.cdw11, 0u);
}

// The ring on this kernel. io_uring may be switched off (a container's
// seccomp, kernel.io_uring_disabled): then there is nothing to test here.
std::unique_ptr<AdminRing> RingOrSkip() {
  absl::StatusOr<std::unique_ptr<AdminRing>> r = AdminRing::Create(8);
  if (!r.ok()) {
    if (absl::IsPermissionDenied(r.status()) ||
        absl::IsUnimplemented(r.status())) {
      return nullptr;
    }
    ADD_FAILURE() << r.status();
    return nullptr;
  }
  return *std::move(r);
}

TEST(AdminRingTest, NopCompletesWithItsTag) {
  std::unique_ptr<AdminRing> ring = RingOrSkip();
  if (ring == nullptr) GTEST_SKIP() << "io_uring unavailable";
  ASSERT_TRUE(ring->SubmitNop(42).ok());
  absl::StatusOr<std::vector<Completion>> got = ring->Wait(absl::Seconds(5));
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0].tag, 42u);
  EXPECT_EQ((*got)[0].res, 0);
}

TEST(AdminRingTest, WaitTimesOutEmpty) {
  std::unique_ptr<AdminRing> ring = RingOrSkip();
  if (ring == nullptr) GTEST_SKIP() << "io_uring unavailable";
  const absl::Time start = absl::Now();
  absl::StatusOr<std::vector<Completion>> got =
      ring->Wait(absl::Milliseconds(50));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(got->empty());
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(45));
}

TEST(AdminRingTest, AnEventfdWriteFromAnotherThreadEndsTheWait) {
  std::unique_ptr<AdminRing> ring = RingOrSkip();
  if (ring == nullptr) GTEST_SKIP() << "io_uring unavailable";
  const int efd = eventfd(0, EFD_CLOEXEC);
  ASSERT_GE(efd, 0);
  uint64_t buf = 0;
  ASSERT_TRUE(ring->SubmitRead(efd, &buf, 7).ok());
  std::thread waker([efd] {
    absl::SleepFor(absl::Milliseconds(20));
    const uint64_t one = 1;
    ASSERT_EQ(write(efd, &one, sizeof(one)), 8);
  });
  const absl::Time start = absl::Now();
  absl::StatusOr<std::vector<Completion>> got = ring->Wait(absl::Seconds(10));
  waker.join();
  close(efd);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0].tag, 7u);
  EXPECT_EQ((*got)[0].res, 8);
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

TEST(AdminRingTest, PassthruOnAFileWithoutItIsRefusedInTheCompletion) {
  std::unique_ptr<AdminRing> ring = RingOrSkip();
  if (ring == nullptr) GTEST_SKIP() << "io_uring unavailable";
  // A pipe: no uring_cmd. (Not /dev/null, which since Linux 6.4 completes
  // any uring_cmd with 0, for benchmarks.)
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
  alignas(4096) static char buf[kIdentifyDataBytes];
  ASSERT_TRUE(ring->SubmitAdmin(fds[0], IdentifyController(buf), 9).ok());
  absl::StatusOr<std::vector<Completion>> got = ring->Wait(absl::Seconds(5));
  close(fds[0]);
  close(fds[1]);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0].tag, 9u);
  // The kernel refuses it in the completion: EOPNOTSUPP.
  EXPECT_EQ((*got)[0].res, -EOPNOTSUPP);
  EXPECT_EQ(DecodePassthruResult((*got)[0].res).kind, Kind::kErrno);
}

using ::pathwise::testing::FailSubmittingEnters;

// An io_uring_enter() that fails leaves the submission in the ring, where
// the kernel still takes it at the next enter: the command is queued and
// its buffer must live until its completion. So the submission reports
// it queued, and the next Wait sends it. (Reported as failed, the prober
// freed the buffer of an Identify the kernel then ran into it.)
TEST(AdminRingTest, ACommandWhoseEnterFailedIsStillSentAndCompletes) {
  std::unique_ptr<AdminRing> ring = RingOrSkip();
  if (ring == nullptr) GTEST_SKIP() << "io_uring unavailable";
  absl::Status submitted;
  absl::StatusOr<std::vector<Completion>> waited;
  std::thread t([&] {
    FailSubmittingEnters();
    submitted = ring->SubmitNop(42);
    // A Wait whose enters keep failing is no error: nothing completed.
    waited = ring->Wait(absl::Milliseconds(20));
  });
  t.join();
  EXPECT_TRUE(submitted.ok()) << submitted;
  ASSERT_TRUE(waited.ok()) << waited.status();
  EXPECT_TRUE(waited->empty());
  absl::StatusOr<std::vector<Completion>> got = ring->Wait(absl::Seconds(5));
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0].tag, 42u);
  EXPECT_EQ((*got)[0].res, 0);
}

}  // namespace
}  // namespace pathwise::nvme

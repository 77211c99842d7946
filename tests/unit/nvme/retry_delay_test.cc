// SPDX-License-Identifier: Apache-2.0
// Command Retry Delay: the CRD bits of a status, the controller's CRDT1..3
// from Identify Controller, and the delay they make.
#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>

#include "nvme/status.h"

namespace pathwise::nvme {
namespace {

TEST(RetryDelayTest, CrdBitsSelectTheTime) {
  EXPECT_EQ(RetryDelayIndex(0x0281), 0);
  EXPECT_EQ(RetryDelayIndex(0x0281 | 0x0800), 1);
  EXPECT_EQ(RetryDelayIndex(0x0281 | 0x1000), 2);
  EXPECT_EQ(RetryDelayIndex(0x0281 | 0x1800), 3);
  // More and DNR are not CRD.
  EXPECT_EQ(RetryDelayIndex(0x0281 | kStatusMore | kStatusDnr), 0);
  EXPECT_EQ(RetryDelayIndex(0x7fff), 3);
}

TEST(RetryDelayTest, ParsesCrdtFromIdentifyController) {
  std::array<std::byte, 4096> id{};
  // CRDT1 = 1 (100 ms), CRDT2 = 0x0203 (51.5 s), CRDT3 = 0xffff.
  id[133] = std::byte{0xee};  // the byte before: not part of it
  id[134] = std::byte{0x01};
  id[135] = std::byte{0x00};
  id[136] = std::byte{0x03};
  id[137] = std::byte{0x02};
  id[138] = std::byte{0xff};
  id[139] = std::byte{0xff};
  id[140] = std::byte{0xee};  // the byte after
  absl::StatusOr<RetryDelayTimes> t = ParseRetryDelayTimes(id);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->crdt, (std::array<uint16_t, 3>{1, 0x0203, 0xffff}));
  EXPECT_EQ(RetryDelayNs(1, *t), 100'000'000);
  EXPECT_EQ(RetryDelayNs(2, *t), int64_t{0x0203} * 100'000'000);
  EXPECT_EQ(RetryDelayNs(3, *t), int64_t{0xffff} * 100'000'000);
  EXPECT_EQ(RetryDelayNs(0, *t), 0);
  EXPECT_EQ(RetryDelayNs(4, *t), 0);
}

// Command Quiesce Time: bytes 386..387, little-endian milliseconds; data
// that stops before it (an old capture) has none.
TEST(RetryDelayTest, CommandQuiesceTime) {
  std::array<std::byte, 4096> id{};
  id[385] = std::byte{0xee};
  id[386] = std::byte{0x34};
  id[387] = std::byte{0x12};
  id[388] = std::byte{0xee};
  EXPECT_EQ(ParseRetryDelayTimes(id)->cqt_ms, 0x1234);
  std::array<std::byte, 387> short_id{};
  short_id[386] = std::byte{0x34};
  EXPECT_EQ(ParseRetryDelayTimes(short_id)->cqt_ms, 0);
}

TEST(RetryDelayTest, ShortIdentifyDataIsAnError) {
  std::array<std::byte, 139> id{};
  EXPECT_FALSE(ParseRetryDelayTimes(id).ok());
  std::array<std::byte, 140> just{};
  EXPECT_TRUE(ParseRetryDelayTimes(just).ok());
}

TEST(RetryDelayTest, AControllerWithoutTimesAsksForNone) {
  const RetryDelayTimes none;
  for (int crd = 0; crd <= 3; ++crd) EXPECT_EQ(RetryDelayNs(crd, none), 0);
}

}  // namespace
}  // namespace pathwise::nvme

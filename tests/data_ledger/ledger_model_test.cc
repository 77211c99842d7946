// SPDX-License-Identifier: Apache-2.0
// The ledger's rules: every verdict, the block encoding, the state file.
#include "tests/data_ledger/ledger_model.h"

#include <array>

#include "gtest/gtest.h"

namespace pathwise::ledger {
namespace {

using Kind = Value::Kind;
constexpr uint64_t kRun = 77;

Decoded Read(uint64_t block, uint64_t gen) {
  std::array<std::byte, kBlock> b;
  Encode(kRun, block, gen, b.data());
  return Decode(kRun, block, b.data());
}
const Decoded kZeroes{};

TEST(LedgerBlockTest, RoundTripAndDamage) {
  std::array<std::byte, kBlock> b;
  Encode(kRun, 5, 9, b.data());
  Decoded d = Decode(kRun, 5, b.data());
  EXPECT_EQ(d.kind, Decoded::Kind::kValid);
  EXPECT_EQ(d.gen, 9u);
  EXPECT_EQ(Decode(kRun, 6, b.data()).kind, Decoded::Kind::kMisplaced);
  EXPECT_EQ(Decode(kRun + 1, 5, b.data()).kind, Decoded::Kind::kForeign);
  // Half of another write of the same block: torn.
  std::array<std::byte, kBlock> other;
  Encode(kRun, 5, 10, other.data());
  std::copy(other.begin() + 2048, other.end(), b.begin() + 2048);
  EXPECT_EQ(Decode(kRun, 5, b.data()).kind, Decoded::Kind::kTorn);
  b.fill(std::byte{0});
  EXPECT_EQ(Decode(kRun, 5, b.data()).kind, Decoded::Kind::kZero);
  b[100] = std::byte{1};
  EXPECT_EQ(Decode(kRun, 5, b.data()).kind, Decoded::Kind::kForeign);
}

TEST(LedgerModelTest, AckedWriteMustBeThere) {
  Model m(4);
  m.Acked(0, 4, {Kind::kData, 1});
  m.Acked(1, 1, {Kind::kData, 2});
  EXPECT_EQ(m.Check(1, Read(1, 2)), Verdict::kOk);
  EXPECT_EQ(m.Check(1, Read(1, 1)), Verdict::kLost);
  EXPECT_EQ(m.Check(1, kZeroes), Verdict::kLost);
  EXPECT_EQ(m.Check(1, Read(1, 3)), Verdict::kForeign);
  EXPECT_EQ(m.Check(0, Read(0, 1)), Verdict::kOk);
}

TEST(LedgerModelTest, FailedWriteMayLandUntilANewerAck) {
  Model m(1);
  m.Acked(0, 1, {Kind::kData, 1});
  m.Failed(0, 1, {Kind::kData, 2});
  EXPECT_EQ(m.Check(0, Read(0, 1)), Verdict::kOk);
  EXPECT_EQ(m.Check(0, Read(0, 2)), Verdict::kOk);
  m.Acked(0, 1, {Kind::kData, 3});
  EXPECT_EQ(m.Check(0, Read(0, 3)), Verdict::kOk);
  EXPECT_EQ(m.Check(0, Read(0, 2)), Verdict::kGhost);
  // Generation 1 preceded the ack of 3 only through the failed 2: the
  // acknowledged-before value is 1, so it reads as lost.
  EXPECT_EQ(m.Check(0, Read(0, 1)), Verdict::kLost);
}

TEST(LedgerModelTest, OlderAckedGenerationIsAGhost) {
  Model m(1);
  m.Acked(0, 1, {Kind::kData, 1});
  m.Acked(0, 1, {Kind::kData, 2});
  m.Acked(0, 1, {Kind::kData, 3});
  EXPECT_EQ(m.Check(0, Read(0, 2)), Verdict::kLost);
  EXPECT_EQ(m.Check(0, Read(0, 1)), Verdict::kGhost);
}

TEST(LedgerModelTest, ZeroesAndDiscards) {
  Model m(2);
  m.Acked(0, 2, {Kind::kData, 1});
  m.Acked(0, 1, {Kind::kZero, 0});
  EXPECT_EQ(m.Check(0, kZeroes), Verdict::kOk);
  EXPECT_EQ(m.Check(0, Read(0, 1)), Verdict::kLost);
  m.Acked(1, 1, {Kind::kDiscarded, 0});
  EXPECT_EQ(m.Check(1, kZeroes), Verdict::kOk);
  EXPECT_EQ(m.Check(1, Read(1, 1)), Verdict::kOk);
  m.Acked(1, 1, {Kind::kData, 4});
  EXPECT_EQ(m.Check(1, kZeroes), Verdict::kLost);
}

// A Discard may leave a block as it was: a failed write before it that
// landed is still allowed, until data is acknowledged again.
TEST(LedgerModelTest, ADiscardKeepsAFailedWriteAllowed) {
  Model m(1);
  m.Acked(0, 1, {Kind::kData, 1});
  m.Failed(0, 1, {Kind::kData, 2});
  m.Acked(0, 1, {Kind::kDiscarded, 0});
  EXPECT_EQ(m.Check(0, Read(0, 2)), Verdict::kOk);
  EXPECT_EQ(m.Check(0, Read(0, 1)), Verdict::kOk);
  EXPECT_EQ(m.Check(0, kZeroes), Verdict::kOk);
  m.Acked(0, 1, {Kind::kData, 3});
  EXPECT_EQ(m.Check(0, Read(0, 2)), Verdict::kGhost);
}

TEST(LedgerModelTest, UnwrittenBlocksHoldAnything) {
  Model m(1);
  EXPECT_EQ(m.Check(0, kZeroes), Verdict::kOk);
  EXPECT_EQ(m.Check(0, Decoded{Decoded::Kind::kForeign, 0, 0}), Verdict::kOk);
  EXPECT_EQ(m.Check(0, Decoded{Decoded::Kind::kTorn, 0, 0}), Verdict::kTorn);
}

TEST(LedgerModelTest, StateRoundTrip) {
  Model m(3);
  m.Acked(0, 3, {Kind::kData, 1});
  m.Failed(1, 1, {Kind::kData, 2});
  m.Acked(2, 1, {Kind::kZero, 0});
  const Model back = Model::FromJson(nlohmann::json::parse(m.ToJson().dump()));
  EXPECT_EQ(back.size(), 3u);
  EXPECT_EQ(back.Check(1, Read(1, 2)), Verdict::kOk);
  EXPECT_EQ(back.Check(1, Read(1, 1)), Verdict::kOk);
  EXPECT_EQ(back.Check(2, kZeroes), Verdict::kOk);
  EXPECT_EQ(back.Check(0, kZeroes), Verdict::kLost);
}

TEST(LedgerMixTest, ParsesNamedWeightsAndKeepsTheRest) {
  Mix m;
  EXPECT_EQ(ParseMix("write4k=60,read=0", &m), "");
  EXPECT_EQ(m.write4k, 60);
  EXPECT_EQ(m.read, 0);
  EXPECT_EQ(m.write64k, Mix{}.write64k);
  EXPECT_EQ(ParseMix("", &m), "");
  EXPECT_EQ(m.write4k, 60);
}

TEST(LedgerMixTest, RejectsBadInputAndLeavesTheMix) {
  for (const char* bad : {"reads=1", "read", "read=", "read=-1", "read=1001",
                          "read=1x", "read=1,,",
                          "read=0,write4k=0,write64k=0,write_large=0,fua=0,"
                          "flush=0,write_zeroes=0,discard=0"}) {
    Mix m;
    EXPECT_NE(ParseMix(bad, &m), "") << bad;
    EXPECT_EQ(m.read, Mix{}.read) << bad;
  }
}

}  // namespace
}  // namespace pathwise::ledger

// SPDX-License-Identifier: Apache-2.0
// nvme/ana_log.h and the Get Log Page builder: hand-built pages (several
// groups, empty groups, every state, reserved states), hostile pages
// (truncated at every byte, counts beyond the buffer, counts that would
// overflow a careless sum), the Identify Controller fields against
// libnvme's struct, and the command's dwords.
#include "nvme/ana_log.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <nvme/types.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <vector>

#include "absl/strings/match.h"
#include "nvme/admin.h"
#include "nvme/ana_read.h"
#include "nvme/uring.h"

namespace pathwise::nvme {
namespace {

using model::AnaState;

// An ANA log page built byte by byte, little endian.
class Page {
 public:
  Page(uint64_t change_count, uint16_t ngrps) {
    Put(change_count, 8);
    Put(ngrps, 2);
    Put(0, 6);  // reserved
  }
  Page& Group(uint32_t id, uint64_t change_count, uint8_t state,
              const std::vector<uint32_t>& nsids) {
    return GroupWithCount(id, static_cast<uint32_t>(nsids.size()), change_count,
                          state, nsids);
  }
  // A descriptor whose NNSIDS need not match the ids that follow.
  Page& GroupWithCount(uint32_t id, uint32_t nnsids, uint64_t change_count,
                       uint8_t state, const std::vector<uint32_t>& nsids) {
    Put(id, 4);
    Put(nnsids, 4);
    Put(change_count, 8);
    Put(state, 1);
    Put(0, 15);  // reserved
    for (uint32_t n : nsids) Put(n, 4);
    return *this;
  }
  Page& Pad(size_t n) {
    Put(0, n);
    return *this;
  }
  std::span<const std::byte> span() const { return bytes_; }
  size_t size() const { return bytes_.size(); }

 private:
  void Put(uint64_t v, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      bytes_.push_back(static_cast<std::byte>(i < 8 ? (v >> (8 * i)) : 0));
    }
  }
  std::vector<std::byte> bytes_;
};

TEST(AnaLogTest, SeveralGroupsWithTheirNamespaces) {
  Page p(0x1122334455667788ull, 3);
  p.Group(1, 7, 0x01, {1, 2})
      .Group(2, 8, 0x02, {3})
      .Group(5, 9, 0x03, {4, 9, 12});
  absl::StatusOr<AnaLog> log = ParseAnaLog(p.span());
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ(log->change_count, 0x1122334455667788ull);
  ASSERT_EQ(log->groups.size(), 3u);
  EXPECT_EQ(log->groups[0],
            (AnaGroup{1, 7, 0x01, AnaState::kOptimized, {1, 2}}));
  EXPECT_EQ(log->groups[1],
            (AnaGroup{2, 8, 0x02, AnaState::kNonOptimized, {3}}));
  EXPECT_EQ(log->groups[2],
            (AnaGroup{5, 9, 0x03, AnaState::kInaccessible, {4, 9, 12}}));
  EXPECT_EQ(log->bytes_used, 16u + 3 * 32 + 6 * 4);
  EXPECT_EQ(StateOf(*log, 1), AnaState::kOptimized);
  EXPECT_EQ(StateOf(*log, 2), AnaState::kOptimized);
  EXPECT_EQ(StateOf(*log, 3), AnaState::kNonOptimized);
  EXPECT_EQ(StateOf(*log, 12), AnaState::kInaccessible);
  EXPECT_EQ(StateOf(*log, 5), std::nullopt);
  EXPECT_EQ(StateOf(*log, 0), std::nullopt);
  ASSERT_NE(GroupOf(*log, 9), nullptr);
  EXPECT_EQ(GroupOf(*log, 9)->id, 5u);
}

TEST(AnaLogTest, DescriptorsFollowEachOtherWithoutPadding) {
  // An odd number of ids leaves the next descriptor 4-byte aligned only: it
  // starts right there, as nvme_parse_ana_log() reads it.
  Page p(1, 2);
  p.Group(1, 0, 0x01, {1}).Group(2, 0, 0x04, {2});
  absl::StatusOr<AnaLog> log = ParseAnaLog(p.span());
  ASSERT_TRUE(log.ok()) << log.status();
  ASSERT_EQ(log->groups.size(), 2u);
  EXPECT_EQ(log->groups[1].id, 2u);
  EXPECT_EQ(log->groups[1].state, AnaState::kPersistentLoss);
  EXPECT_EQ(log->groups[1].nsids, std::vector<uint32_t>{2});
}

TEST(AnaLogTest, EmptyGroupsAndReturnGroupsOnly) {
  Page p(3, 3);
  p.Group(1, 1, 0x01, {}).Group(2, 2, 0x0f, {7}).Group(3, 3, 0x02, {});
  p.Pad(64);  // the unused rest of a buffer sized for more
  absl::StatusOr<AnaLog> log = ParseAnaLog(p.span());
  ASSERT_TRUE(log.ok()) << log.status();
  ASSERT_EQ(log->groups.size(), 3u);
  EXPECT_TRUE(log->groups[0].nsids.empty());
  EXPECT_EQ(log->groups[1].state, AnaState::kChange);
  EXPECT_TRUE(log->groups[2].nsids.empty());
  EXPECT_EQ(log->bytes_used, 16u + 3 * 32 + 4);
  EXPECT_EQ(StateOf(*log, 7), AnaState::kChange);
  EXPECT_EQ(StateOf(*log, 1), std::nullopt);
}

TEST(AnaLogTest, NoGroups) {
  Page p(0, 0);
  absl::StatusOr<AnaLog> log = ParseAnaLog(p.span());
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_TRUE(log->groups.empty());
  EXPECT_EQ(log->bytes_used, 16u);
}

TEST(AnaLogTest, EveryStateFieldValue) {
  for (unsigned v = 0; v <= 0xff; ++v) {
    Page p(0, 1);
    p.Group(1, 0, static_cast<uint8_t>(v), {1});
    absl::StatusOr<AnaLog> log = ParseAnaLog(p.span());
    ASSERT_TRUE(log.ok()) << "state byte " << v << ": " << log.status();
    const AnaGroup& g = log->groups[0];
    // Bits 7:4 are reserved: only 3:0 count.
    EXPECT_EQ(g.state_field, v & 0x0f) << v;
    AnaState want = AnaState::kUnknown;
    switch (v & 0x0f) {
      case 1:
        want = AnaState::kOptimized;
        break;
      case 2:
        want = AnaState::kNonOptimized;
        break;
      case 3:
        want = AnaState::kInaccessible;
        break;
      case 4:
        want = AnaState::kPersistentLoss;
        break;
      case 0xf:
        want = AnaState::kChange;
        break;
    }
    EXPECT_EQ(g.state, want) << "state byte " << v;
    EXPECT_EQ(AnaStateOfField(static_cast<uint8_t>(v)), want);
  }
}

TEST(AnaLogTest, TruncatedAtEveryByteIsAnErrorNeverARead) {
  Page p(9, 3);
  p.Group(1, 1, 0x01, {1, 2, 3}).Group(2, 2, 0x02, {}).Group(3, 3, 0x03, {4});
  const size_t full = p.size();
  ASSERT_TRUE(ParseAnaLog(p.span()).ok());
  for (size_t n = 0; n < full; ++n) {
    // A copy of exactly n bytes, so that ASan would see a read past it.
    std::vector<std::byte> cut(p.span().begin(), p.span().begin() + n);
    absl::StatusOr<AnaLog> log = ParseAnaLog(cut);
    ASSERT_FALSE(log.ok()) << "truncated to " << n << " bytes";
    EXPECT_TRUE(absl::IsInvalidArgument(log.status())) << log.status();
    EXPECT_NE(log.status().message().find("ANA log page"),
              absl::string_view::npos);
  }
}

TEST(AnaLogTest, ErrorsSayWhereAndWhat) {
  Page header_only(0, 1);
  absl::StatusOr<AnaLog> log = ParseAnaLog(header_only.span());
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.status().message(),
            "ANA log page: group descriptor 0 of 1 at byte 16 runs past the "
            "page's 16 bytes");

  Page short_ids(0, 1);
  short_ids.GroupWithCount(4, 3, 0, 0x01, {1, 2});
  log = ParseAnaLog(short_ids.span());
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.status().message(),
            "ANA log page: group 4 (descriptor 0) lists 3 namespaces from "
            "byte 48, past the page's 56 bytes");

  EXPECT_EQ(ParseAnaLog({}).status().message(),
            "ANA log page: 0 bytes, shorter than its 16-byte header");
}

TEST(AnaLogTest, HugeCountsAreCheckedAgainstTheBytesWithoutOverflow) {
  // NNSIDS 0xFFFFFFFF: 4 * that is past any buffer, and a 32-bit sum
  // would wrap to a small offset.
  Page p(0, 1);
  p.GroupWithCount(1, 0xffffffffu, 0, 0x01, {1, 2, 3, 4}).Pad(4096);
  EXPECT_TRUE(absl::IsInvalidArgument(ParseAnaLog(p.span()).status()));
  // 0x40000000 ids: 4 * that wraps a 32-bit size to 0.
  Page q(0, 1);
  q.GroupWithCount(1, 0x40000000u, 0, 0x01, {}).Pad(64);
  EXPECT_TRUE(absl::IsInvalidArgument(ParseAnaLog(q.span()).status()));
  // 65535 groups announced, one there.
  Page r(0, 0xffff);
  r.Group(1, 0, 0x01, {1});
  EXPECT_TRUE(absl::IsInvalidArgument(ParseAnaLog(r.span()).status()));
}

TEST(AnaLogTest, GroupIdZeroIsRejected) {
  Page p(0, 2);
  p.Group(1, 0, 0x01, {1}).Group(0, 0, 0x01, {2});
  absl::StatusOr<AnaLog> log = ParseAnaLog(p.span());
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.status().message().find("ANAGRPID 0"), absl::string_view::npos)
      << log.status();
}

// Identify Controller with the given little-endian values at offsets.
std::vector<std::byte> Identify() { return std::vector<std::byte>(4096); }
void PutLe(std::vector<std::byte>& b, size_t off, uint64_t v, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    b[off + i] = static_cast<std::byte>(v >> (8 * i));
  }
}

TEST(AnaIdentifyTest, FieldsAtLibnvmesOffsets) {
  std::vector<std::byte> id = Identify();
  PutLe(id, offsetof(nvme_id_ctrl, cmic), 0x0b, 1);  // ANA, multi-ctrl, port
  PutLe(id, offsetof(nvme_id_ctrl, anatt), 10, 1);
  PutLe(id, offsetof(nvme_id_ctrl, anacap), 0x47, 1);
  PutLe(id, offsetof(nvme_id_ctrl, anagrpmax), 128, 4);
  PutLe(id, offsetof(nvme_id_ctrl, nanagrpid), 126, 4);
  PutLe(id, offsetof(nvme_id_ctrl, nn), 1024, 4);
  PutLe(id, offsetof(nvme_id_ctrl, mnan), 512, 4);
  absl::StatusOr<AnaIdentify> a = ParseAnaIdentify(id);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->ana_reporting);
  EXPECT_EQ(a->anatt, 10);
  EXPECT_EQ(a->anacap, 0x47);
  EXPECT_EQ(a->anagrpmax, 128u);
  EXPECT_EQ(a->nanagrpid, 126u);
  EXPECT_EQ(a->nn, 1024u);
  EXPECT_EQ(a->mnan, 512u);
  // The page the kernel would size: header, 126 descriptors, 512 ids.
  EXPECT_EQ(AnaLogBytes(*a, false), 16u + 126 * 32 + 512 * 4);
  EXPECT_EQ(AnaLogBytes(*a, true), 16u + 126 * 32);

  PutLe(id, offsetof(nvme_id_ctrl, cmic), 0x07, 1);  // no ANA reporting
  EXPECT_FALSE(ParseAnaIdentify(id)->ana_reporting);
  EXPECT_TRUE(absl::IsInvalidArgument(
      ParseAnaIdentify(std::span(id).first(4095)).status()));
}

TEST(AnaIdentifyTest, SizeFallsBackToNnWithoutMnanAndDoesNotOverflow) {
  AnaIdentify a{.nanagrpid = 2, .nn = 8, .mnan = 0};
  EXPECT_EQ(AnaLogBytes(a, false), 16u + 2 * 32 + 8 * 4);
  AnaIdentify huge{
      .nanagrpid = 0xffffffffu, .nn = 0xffffffffu, .mnan = 0xffffffffu};
  EXPECT_EQ(AnaLogBytes(huge, false),
            16 + 32 * uint64_t{0xffffffff} + 4 * uint64_t{0xffffffff});
  EXPECT_EQ(AnaLogBytes(a, false) % 4, 0u);
}

TEST(GetLogPageAnaTest, DwordsOfTheCommand) {
  alignas(4096) static std::byte buf[16384];
  const nvme_uring_cmd c = GetLogPageAna(buf, 4096, false);
  EXPECT_EQ(c.opcode, 0x02);
  EXPECT_EQ(c.nsid, 0xffffffffu);
  EXPECT_EQ(c.addr, reinterpret_cast<uintptr_t>(buf));
  EXPECT_EQ(c.data_len, 4096u);
  // LID 0Ch, LSP 0, RAE 0, NUMDL 1023 (0's based).
  EXPECT_EQ(c.cdw10, 0x0c | (1023u << 16));
  EXPECT_EQ(c.cdw11, 0u);  // NUMDU 0, LSI 0
  EXPECT_EQ(c.cdw12, 0u);  // offset 0
  EXPECT_EQ(c.cdw13, 0u);
  EXPECT_EQ(c.cdw14, 0u);  // UUID index 0, CSI 0 (NVM)
  EXPECT_EQ(c.timeout_ms, 0u);

  // Return Groups Only: LSP bit 0 is CDW10 bit 8.
  EXPECT_EQ(GetLogPageAna(buf, 4096, true).cdw10, 0x10c | (1023u << 16));
}

TEST(GetLogPageAnaTest, NumdSplitsAcrossNumdlAndNumdu) {
  // 0x12345 + 1 dwords: NUMD 0x12345, NUMDL 0x2345, NUMDU 0x1.
  const uint32_t len = (0x12345 + 1) * 4;
  const nvme_uring_cmd c = GetLogPageAna(nullptr, len, false);
  EXPECT_EQ(c.cdw10 >> 16, 0x2345u);
  EXPECT_EQ(c.cdw11 & 0xffff, 0x1u);
  EXPECT_EQ(c.data_len, len);
  // Exactly 64 Ki dwords: NUMD 0xFFFF, all in NUMDL.
  const nvme_uring_cmd d = GetLogPageAna(nullptr, 0x10000 * 4, false);
  EXPECT_EQ(d.cdw10 >> 16, 0xffffu);
  EXPECT_EQ(d.cdw11, 0u);
  // Not whole dwords: rounded down, never more than the buffer.
  const nvme_uring_cmd e = GetLogPageAna(nullptr, 4099, false);
  EXPECT_EQ(e.data_len, 4096u);
  EXPECT_EQ(e.cdw10 >> 16, 1023u);
  EXPECT_EQ(GetLogPageAna(nullptr, 3, false).data_len, 0u);
}

TEST(ReadAnaLogTest, ACharDeviceWithoutPassthruFailsAtIdentify) {
  absl::StatusOr<std::unique_ptr<AdminRing>> ring = AdminRing::Create(4);
  if (!ring.ok()) GTEST_SKIP() << "io_uring unavailable: " << ring.status();
  // A pipe has no uring_cmd: the kernel refuses the Identify in its
  // completion, and nothing else is sent.
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
  absl::StatusOr<AnaLog> log = ReadAnaLog(**ring, fds[0]);
  close(fds[0]);
  close(fds[1]);
  ASSERT_FALSE(log.ok());
  EXPECT_TRUE(absl::IsUnimplemented(log.status())) << log.status();
  EXPECT_TRUE(absl::StartsWith(log.status().message(), "Identify Controller: "))
      << log.status();
}

}  // namespace
}  // namespace pathwise::nvme

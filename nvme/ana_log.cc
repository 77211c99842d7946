// SPDX-License-Identifier: Apache-2.0
#include "nvme/ana_log.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace pathwise::nvme {
namespace {

template <typename T>
T LoadLe(std::span<const std::byte> bytes, size_t offset) {
  // The page is little endian, and so is every host pathwise builds for
  // (x86-64, arm64); a big-endian build would have to swap here.
  static_assert(std::endian::native == std::endian::little);
  T v;
  std::memcpy(&v, bytes.data() + offset, sizeof(v));
  return v;
}

// Identify Controller field offsets (NVMe base specification, Identify
// Controller data structure).
constexpr size_t kCmicOffset = 76;
constexpr size_t kAnattOffset = 342;
constexpr size_t kAnacapOffset = 343;
constexpr size_t kAnagrpmaxOffset = 344;
constexpr size_t kNanagrpidOffset = 348;
constexpr size_t kNnOffset = 516;
constexpr size_t kMnanOffset = 540;
constexpr uint8_t kCmicAnaReporting = 1 << 3;
constexpr size_t kIdentifyBytes = 4096;

}  // namespace

model::AnaState AnaStateOfField(uint8_t field) {
  switch (field & 0x0f) {
    case 0x1:
      return model::AnaState::kOptimized;
    case 0x2:
      return model::AnaState::kNonOptimized;
    case 0x3:
      return model::AnaState::kInaccessible;
    case 0x4:
      return model::AnaState::kPersistentLoss;
    case 0xf:
      return model::AnaState::kChange;
    default:
      return model::AnaState::kUnknown;
  }
}

absl::StatusOr<AnaLog> ParseAnaLog(std::span<const std::byte> page) {
  if (page.size() < kAnaLogHeaderBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("ANA log page: ", page.size(),
                     " bytes, shorter than its 16-byte header"));
  }
  AnaLog log;
  log.change_count = LoadLe<uint64_t>(page, 0);
  const uint16_t ngrps = LoadLe<uint16_t>(page, 8);
  log.groups.reserve(
      std::min<size_t>(ngrps, page.size() / kAnaGroupDescriptorBytes));
  size_t offset = kAnaLogHeaderBytes;
  for (uint32_t i = 0; i < ngrps; ++i) {
    // Both checks compare with what is left, so no sum can overflow.
    if (page.size() - offset < kAnaGroupDescriptorBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ANA log page: group descriptor ", i, " of ", ngrps, " at byte ",
          offset, " runs past the page's ", page.size(), " bytes"));
    }
    AnaGroup g;
    g.id = LoadLe<uint32_t>(page, offset);
    const uint32_t nnsids = LoadLe<uint32_t>(page, offset + 4);
    g.change_count = LoadLe<uint64_t>(page, offset + 8);
    g.state_field = LoadLe<uint8_t>(page, offset + 16) & 0x0f;
    g.state = AnaStateOfField(g.state_field);
    if (g.id == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("ANA log page: group descriptor ", i, " at byte ",
                       offset, " has ANAGRPID 0, which names no group"));
    }
    offset += kAnaGroupDescriptorBytes;
    if ((page.size() - offset) / 4 < nnsids) {
      return absl::InvalidArgumentError(
          absl::StrCat("ANA log page: group ", g.id, " (descriptor ", i,
                       ") lists ", nnsids, " namespaces from byte ", offset,
                       ", past the page's ", page.size(), " bytes"));
    }
    g.nsids.resize(nnsids);
    for (uint32_t n = 0; n < nnsids; ++n) {
      g.nsids[n] = LoadLe<uint32_t>(page, offset + 4 * size_t{n});
    }
    offset += 4 * size_t{nnsids};
    log.groups.push_back(std::move(g));
  }
  log.bytes_used = offset;
  return log;
}

const AnaGroup* GroupOf(const AnaLog& log, uint32_t nsid) {
  if (nsid == 0) return nullptr;
  for (const AnaGroup& g : log.groups) {
    for (uint32_t n : g.nsids) {
      if (n == nsid) return &g;
    }
  }
  return nullptr;
}

std::optional<model::AnaState> StateOf(const AnaLog& log, uint32_t nsid) {
  const AnaGroup* g = GroupOf(log, nsid);
  if (g == nullptr) return std::nullopt;
  return g->state;
}

absl::StatusOr<AnaIdentify> ParseAnaIdentify(std::span<const std::byte> id) {
  if (id.size() < kIdentifyBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("Identify Controller data: ", id.size(), " bytes, want ",
                     kIdentifyBytes));
  }
  AnaIdentify a;
  a.ana_reporting = (LoadLe<uint8_t>(id, kCmicOffset) & kCmicAnaReporting);
  a.anatt = LoadLe<uint8_t>(id, kAnattOffset);
  a.anacap = LoadLe<uint8_t>(id, kAnacapOffset);
  a.anagrpmax = LoadLe<uint32_t>(id, kAnagrpmaxOffset);
  a.nanagrpid = LoadLe<uint32_t>(id, kNanagrpidOffset);
  a.nn = LoadLe<uint32_t>(id, kNnOffset);
  a.mnan = LoadLe<uint32_t>(id, kMnanOffset);
  return a;
}

uint64_t AnaLogBytes(const AnaIdentify& id, bool rgo) {
  uint64_t bytes =
      kAnaLogHeaderBytes + uint64_t{id.nanagrpid} * kAnaGroupDescriptorBytes;
  if (!rgo) bytes += 4 * uint64_t{id.mnan != 0 ? id.mnan : id.nn};
  return bytes;
}

}  // namespace pathwise::nvme

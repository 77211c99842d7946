// SPDX-License-Identifier: Apache-2.0
// The Asymmetric Namespace Access log page (Get Log Page, LID 0Ch): which
// ANA group every namespace of a controller is in and each group's ANA
// state as that controller sees it. The kernel reads it for itself with
// native multipath on (and publishes the per-path result as ana_state in
// sysfs); with nvme_core.multipath=N it reads nothing, and this is how
// userspace learns the states.
//
// Layout (little endian, as nvme_parse_ana_log() in the kernel's
// drivers/nvme/host/multipath.c walks it): a 16-byte header (change count
// u64, number of group descriptors u16, reserved), then the descriptors
// back to back, each 32 bytes (ANAGRPID u32, NNSIDS u32, change count u64,
// ANA state u8 whose bits 3:0 are the state, reserved) followed by its
// NNSIDS namespace ids (u32 each). No padding between descriptors.
//
// The page comes from a device: every count is checked against the bytes
// that are really there before it is used.
#ifndef PATHWISE_NVME_ANA_LOG_H_
#define PATHWISE_NVME_ANA_LOG_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "model/types.h"

namespace pathwise::nvme {

inline constexpr size_t kAnaLogHeaderBytes = 16;
inline constexpr size_t kAnaGroupDescriptorBytes = 32;

// An ANA state field's bits 3:0 as the model's state: 1 optimized, 2
// non-optimized, 3 inaccessible, 4 persistent loss, 0Fh change; a reserved
// value is kUnknown. Bits 7:4 are reserved and ignored.
model::AnaState AnaStateOfField(uint8_t field);

struct AnaGroup {
  uint32_t id = 0;  // ANAGRPID, 1..ANAGRPMAX
  uint64_t change_count = 0;
  uint8_t state_field = 0;  // bits 3:0 of the descriptor's state byte
  model::AnaState state = model::AnaState::kUnknown;
  // Empty when the page was read with Return Groups Only, or the group has
  // no attached namespace.
  std::vector<uint32_t> nsids;
  friend bool operator==(const AnaGroup&, const AnaGroup&) = default;
};

struct AnaLog {
  uint64_t change_count = 0;
  std::vector<AnaGroup> groups;  // in page order
  // Bytes the header and descriptors took; the rest of the buffer is
  // unused (the buffer is sized for the most the controller can report).
  size_t bytes_used = 0;
  friend bool operator==(const AnaLog&, const AnaLog&) = default;
};

// Parses a page as read. InvalidArgument, naming the descriptor and byte
// offset, when the page is shorter than its counts say, or a descriptor
// has ANAGRPID 0 (reserved: no group), as the kernel rejects it. A
// reserved state value is kept (state kUnknown, state_field as read), not
// an error: it is news to report, not a reason to drop the other groups.
absl::StatusOr<AnaLog> ParseAnaLog(std::span<const std::byte> page);

// The state of namespace `nsid` (>= 1) in `log`: its group's, or nullopt
// when no group lists it (a page read with Return Groups Only lists none).
std::optional<model::AnaState> StateOf(const AnaLog& log, uint32_t nsid);
// The group that lists `nsid`, or nullptr.
const AnaGroup* GroupOf(const AnaLog& log, uint32_t nsid);

// What the page's size depends on, from Identify Controller (CNS 01h).
struct AnaIdentify {
  bool ana_reporting = false;  // CMIC bit 3: the controller reports ANA
  uint8_t anatt = 0;           // ANA transition time, seconds
  uint8_t anacap = 0;
  uint32_t anagrpmax = 0;  // largest ANAGRPID
  uint32_t nanagrpid = 0;  // number of ANA group ids the controller has
  uint32_t nn = 0;         // number of namespaces (largest NSID)
  uint32_t mnan = 0;       // maximum number of allocated namespaces
};
// Reads those fields from an Identify Controller data structure (4096
// bytes; InvalidArgument when shorter).
absl::StatusOr<AnaIdentify> ParseAnaIdentify(std::span<const std::byte> id);

// Bytes a buffer needs for the whole page, as the kernel sizes its own
// (nvme_mpath_init_identify): the header, NANAGRPID descriptors and, unless
// `rgo` (Return Groups Only: no namespace ids), one id per namespace that
// can be attached, MNAN (NN where MNAN is 0, which the spec allows for
// controllers without namespace management). A multiple of 4, as Get Log
// Page transfers dwords. Every group lists each namespace once at most and
// a namespace is in one group, so the page cannot be longer. From hostile
// or odd identify data this can be far more than one command transfers
// (MDTS) or than is worth allocating: callers cap it.
uint64_t AnaLogBytes(const AnaIdentify& id, bool rgo);

}  // namespace pathwise::nvme

#endif  // PATHWISE_NVME_ANA_LOG_H_

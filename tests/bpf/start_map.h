// SPDX-License-Identifier: Apache-2.0
// The sampler's own issue stamps map (pw_start) seen from userspace, for
// the own-stamp host tests: its lines read and written by index, other
// requests' stamp words put in them, and what is left of those counted.
#ifndef PATHWISE_TESTS_BPF_START_MAP_H_
#define PATHWISE_TESTS_BPF_START_MAP_H_

#include <bpf/bpf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "bpf/sampler.h"

extern "C" {
#include "bpf/pathwise_bpf.h"
}

namespace pathwise::bpf::host_test {

// A check no request of the test's devices has in `line`: the check of an
// id that no request has (dev_t 0 is no disk's), one per (line, slot),
// and unlike those of the requests whose home line it is, tags below
// `tags` of hardware context 0 of `dev` (0: no device known yet; then a
// request shares a check with one by a 2^-24 chance per slot).
inline uint64_t ForeignCheck(uint32_t lines, uint32_t line, uint32_t slot,
                             uint32_t dev = 0, uint32_t tags = 0) {
  for (uint64_t n = 0;; ++n) {
    const uint64_t chk =
        PW_START_CHECK(uint64_t{line} * PW_START_SLOTS + slot + 1 + (n << 40));
    bool taken = false;
    for (uint32_t tag = 0; tag < tags && !taken; ++tag) {
      const uint32_t pos = PW_START_POS(dev, 0, tag);
      taken = (pos / PW_START_SLOTS & (lines - 1)) == line &&
              PW_START_CHECK(PW_START_ID(dev, 0, tag)) == chk;
    }
    if (!taken) return chk;
  }
}

// The sampler's pw_start map, opened by id; closes on destruction.
class StartMap {
 public:
  explicit StartMap(const BpfSampler& s) {
    for (uint32_t id : s.MapIds()) {
      const int fd = bpf_map_get_fd_by_id(id);
      if (fd < 0) continue;
      bpf_map_info info = {};
      uint32_t len = sizeof(info);
      if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0 &&
          std::string(info.name) == "pw_start") {
        fd_ = fd;
        lines_ = info.max_entries;
        value_size_ = info.value_size;
        return;
      }
      close(fd);
    }
  }
  ~StartMap() {
    if (fd_ >= 0) close(fd_);
  }
  StartMap(const StartMap&) = delete;
  StartMap& operator=(const StartMap&) = delete;

  bool ok() const { return fd_ >= 0 && value_size_ == sizeof(pw_start_line); }
  uint32_t lines() const { return lines_; }

  pw_start_line Get(uint32_t i) const {
    pw_start_line l = {};
    EXPECT_EQ(bpf_map_lookup_elem(fd_, &i, &l), 0) << "line " << i;
    return l;
  }
  void Put(uint32_t i, const pw_start_line& l) {
    EXPECT_EQ(bpf_map_update_elem(fd_, &i, &l, BPF_ANY), 0) << "line " << i;
  }
  // The word FillForeign writes in slot `slot` of line `line`.
  uint64_t Foreign(uint32_t line, uint32_t slot, uint64_t ns) const {
    return PW_START_WORD(ForeignCheck(lines_, line, slot), ns);
  }
  // The lines of the tags below `tags` of hardware context 0 of `dev`.
  std::vector<uint32_t> LinesOf(uint32_t dev, uint32_t tags) const {
    std::vector<uint32_t> out;
    const uint32_t first = PW_START_POS(dev, 0, 0) / PW_START_SLOTS;
    const uint32_t last = PW_START_POS(dev, 0, tags - 1) / PW_START_SLOTS;
    for (uint32_t n = first; n != last + 1; ++n)
      out.push_back(n & (lines_ - 1));
    return out;
  }
  std::vector<uint32_t> AllLines() const {
    std::vector<uint32_t> out(lines_);
    for (uint32_t i = 0; i < lines_; ++i) out[i] = i;
    return out;
  }
  // Slots [0, slots) of `lines`: another request's stamp taken at `ns`.
  void FillForeign(uint32_t slots, uint64_t ns,
                   const std::vector<uint32_t>& lines) {
    for (uint32_t i : lines) {
      pw_start_line l = Get(i);
      for (uint32_t j = 0; j < slots; ++j) l.slot[j] = Foreign(i, j, ns);
      Put(i, l);
    }
  }
  void FillForeign(uint32_t slots, uint64_t ns) {
    FillForeign(slots, ns, AllLines());
  }
  // How many of slots [0, slots) of `lines` still hold what FillForeign
  // wrote.
  uint64_t ForeignIntact(uint32_t slots, uint64_t ns,
                         const std::vector<uint32_t>& lines) const {
    uint64_t n = 0;
    for (uint32_t i : lines) {
      const pw_start_line l = Get(i);
      for (uint32_t j = 0; j < slots; ++j) n += l.slot[j] == Foreign(i, j, ns);
    }
    return n;
  }
  uint64_t ForeignIntact(uint32_t slots, uint64_t ns) const {
    return ForeignIntact(slots, ns, AllLines());
  }
  // Every slot of the lines of tags below `tags` of hardware context 0 of
  // `dev` holds another request's stamp taken at `ns` (as another CPU
  // writes it, one whole word): a completion must never take one.
  // full false: those lines emptied instead.
  void FillOthers(uint32_t dev, uint32_t tags, uint64_t ns, bool full = true) {
    for (uint32_t i : LinesOf(dev, tags)) {
      pw_start_line l = {};
      for (uint32_t j = 0; full && j < PW_START_SLOTS; ++j) {
        l.slot[j] = PW_START_WORD(ForeignCheck(lines_, i, j, dev, tags), ns);
      }
      Put(i, l);
    }
  }
  void Clear() {
    for (uint32_t i = 0; i < lines_; ++i) Put(i, pw_start_line{});
  }

 private:
  int fd_ = -1;
  uint32_t lines_ = 0;
  uint32_t value_size_ = 0;
};

}  // namespace pathwise::bpf::host_test

#endif  // PATHWISE_TESTS_BPF_START_MAP_H_

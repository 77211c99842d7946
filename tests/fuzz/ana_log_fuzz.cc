// SPDX-License-Identifier: Apache-2.0
// Fuzzes the ANA log page parser (nvme/ana_log.h) with the page as a
// device would return it: any bytes, any length. An accepted page must
// account for every byte it says it used (header, descriptors, ids) within
// the input, with no group 0 and state fields in 0..15; StateOf must find
// every listed namespace in the first group that lists it. The same bytes
// also feed ParseAnaIdentify/AnaLogBytes and, as a length, the Get Log
// Page builder, whose transfer must never exceed the length given.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

#include "nvme/admin.h"
#include "nvme/ana_log.h"
#include "nvme/status.h"

namespace pn = pathwise::nvme;

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A copy of exactly `size` bytes, so that ASan sees any read past it.
  std::vector<std::byte> page(size);
  if (size > 0) std::memcpy(page.data(), data, size);
  absl::StatusOr<pn::AnaLog> log = pn::ParseAnaLog(page);
  if (log.ok()) {
    size_t used = pn::kAnaLogHeaderBytes;
    for (const pn::AnaGroup& g : log->groups) {
      Check(g.id != 0);
      Check(g.state_field <= 0x0f);
      Check(g.state == pn::AnaStateOfField(g.state_field));
      used += pn::kAnaGroupDescriptorBytes + 4 * g.nsids.size();
    }
    Check(used == log->bytes_used);
    Check(log->bytes_used <= size);
    // Bounded: a hostile page may list many ids.
    size_t checked = 0;
    for (const pn::AnaGroup& g : log->groups) {
      for (uint32_t nsid : g.nsids) {
        if (++checked > 64) break;
        const pn::AnaGroup* first = pn::GroupOf(*log, nsid);
        if (nsid == 0) {
          Check(first == nullptr);
          continue;
        }
        Check(first != nullptr);
        Check(pn::StateOf(*log, nsid) == first->state);
      }
    }
  } else {
    Check(!log.status().message().empty());
  }

  absl::StatusOr<pn::AnaIdentify> id = pn::ParseAnaIdentify(page);
  Check(id.ok() == (size >= 4096));
  if (id.ok()) {
    Check(pn::AnaLogBytes(*id, false) % 4 == 0);
    Check(pn::AnaLogBytes(*id, true) <= pn::AnaLogBytes(*id, false));
  }

  if (size >= 4) {
    uint32_t len;
    std::memcpy(&len, data, 4);
    const nvme_uring_cmd c =
        pn::GetLogPageAna(nullptr, len, size > 4 && data[4] & 1);
    Check(c.data_len <= len && c.data_len % 4 == 0);
    const uint32_t numd = (c.cdw10 >> 16) | (c.cdw11 & 0xffff) << 16;
    if (c.data_len > 0) Check(uint64_t{numd} + 1 == c.data_len / 4);
    int32_t res;
    std::memcpy(&res, data, 4);
    (void)pn::RetryClassName(
        pn::ClassifyForRetry(pn::DecodePassthruResult(res)));
  }
  return 0;
}

// SPDX-License-Identifier: Apache-2.0
// Fuzzes the queue map's parsers of kernel output: CPU lists and masks,
// /proc/interrupts, fabrics addresses, sock_diag reply buffers, queue IRQ
// names and the BPF queue iterator's records. The first byte picks the
// parser, the rest is the input. Checks: CPU sets are ascending, unique and
// in range; a parsed IRQ has as many counts as the header has CPUs at most.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "bpf/tcpq_decode.h"
#include "collectors/queue_parse.h"

namespace pc = pathwise::collectors;

namespace {

void CheckCpus(const pathwise::model::CpuSet& cpus) {
  for (size_t i = 0; i < cpus.size(); ++i) {
    if (cpus[i] < 0 || cpus[i] > pc::kMaxCpu) __builtin_trap();
    if (i > 0 && cpus[i] <= cpus[i - 1]) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const absl::string_view text(reinterpret_cast<const char*>(data + 1),
                               size - 1);
  const absl::Span<const uint8_t> bytes(data + 1, size - 1);
  switch (data[0] % 7) {
    case 0:
      if (auto c = pc::ParseCpuList(text); c.ok()) CheckCpus(*c);
      break;
    case 1:
      if (auto c = pc::ParseCpuMask(text); c.ok()) CheckCpus(*c);
      break;
    case 2:
      (void)pc::ParseInterrupts(text);
      break;
    case 3:
      (void)pc::ParseFabricsAddress(text);
      break;
    case 4: {
      auto b = pc::ParseInetDiag(bytes);
      if (!b.ok() && b.status().message().empty()) __builtin_trap();
      break;
    }
    case 5: {
      // name \0 ifname \0 bus
      const size_t a = text.find('\0');
      const size_t b = a == text.npos ? text.npos : text.find('\0', a + 1);
      if (b == text.npos) break;
      auto q = pc::MatchQueueIrq(
          text.substr(0, a), text.substr(a + 1, b - a - 1), text.substr(b + 1));
      if (q && q->index < 0) __builtin_trap();
      break;
    }
    case 6: {
      auto r = pathwise::bpf::DecodeTcpQueueRecords(bytes, 64);
      if (r.ok()) {
        for (const auto& q : *r) {
          if (q.io_cpu && (*q.io_cpu < 0 || *q.io_cpu >= 64)) __builtin_trap();
        }
      }
      break;
    }
  }
  return 0;
}

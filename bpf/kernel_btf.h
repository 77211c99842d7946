// SPDX-License-Identifier: Apache-2.0
// Reads what the BPF sampler needs to know about the running kernel from
// its BTF: request flag bits and REQ_OP values (which moved between kernel
// versions, and some were macros before 6.10), the private layout of
// nvme-core's struct nvme_request, and whether tp_btf can attach to a
// tracepoint. Internal to the sampler; exposed for tests.
#ifndef PATHWISE_BPF_KERNEL_BTF_H_
#define PATHWISE_BPF_KERNEL_BTF_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "bpf/status.h"

struct btf;

namespace pathwise::bpf {

// Value of the enumerator `name` in any enum of `btf`, if present.
std::optional<int64_t> FindEnumerator(const struct btf* btf,
                                      std::string_view name);

// Settings of the block programs, as read from the kernel's BTF.
struct BlockLayout {
  // Op class of every REQ_OP_* value (cmd_flags & REQ_OP_MASK).
  std::array<Op, 256> op_class{};
  // Bit number of QUEUE_FLAG_STATS in request_queue.queue_flags.
  uint32_t queue_flag_stats_bit = 0;
  // RQF_STATS mask in request.rq_flags.
  uint32_t rqf_stats_mask = 0;
  // REQ_DRV (== REQ_NVME_MPATH) mask in request.cmd_flags.
  uint32_t req_nvme_mpath_mask = 0;
  // The kernel does not run a BPF program that PID 1 did not load while a
  // thread of PID 1 is current (struct bpf_prog_aux has `init_owned`: a
  // patch some sandbox and microVM guest kernels carry to keep user
  // programs out of their init). A request completed in the softirq that
  // runs on such a thread is then never seen, and the kernel counts no
  // recursion miss for it.
  bool init_context_hidden = false;
  // Human-readable notes on values that were not in BTF and came from the
  // known pre-6.10 macro values instead.
  std::vector<std::string> fallbacks;
};

// Kernels before 6.10/6.11 define QUEUE_FLAG_STATS and RQF_STATS as macros
// (20 and 1 << 17 since 5.0), which BTF does not carry.
inline constexpr uint32_t kQueueFlagStatsMacro = 20;
inline constexpr uint32_t kRqfStatsMacro = 1u << 17;

absl::StatusOr<BlockLayout> ReadBlockLayout(const struct btf* vmlinux);

// Private layout of nvme-core's struct nvme_request, which follows struct
// request in the same allocation (blk_mq_rq_to_pdu(rq) == rq + 1).
struct NvmeLayout {
  uint32_t request_size = 0;  // sizeof(struct request)
  uint32_t retries_offset = 0;
  uint32_t status_offset = 0;
};

// `nvme` is the BTF holding struct nvme_request: nvme-core's module BTF
// (split on vmlinux) or vmlinux itself when nvme-core is built in.
absl::StatusOr<NvmeLayout> ReadNvmeLayout(const struct btf* vmlinux,
                                          const struct btf* nvme);

// True when a BPF_PROG_TYPE_TRACING program can be loaded for tp_btf on
// tracepoint `tp` (the kernel has btf_trace_<tp> and accepts the attach
// target), in vmlinux or, if `module` is non-empty, in that module's BTF.
// Loads and closes a two-instruction program, like libbpf-tools'
// probe_tp_btf(). `why` receives the reason when false.
bool ProbeTpBtf(std::string_view tp, std::string_view module, std::string* why);

}  // namespace pathwise::bpf

#endif  // PATHWISE_BPF_KERNEL_BTF_H_

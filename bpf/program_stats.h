// SPDX-License-Identifier: Apache-2.0
// Plain results about the kernel objects of a loaded BPF object: run
// statistics of its programs and the kernel IDs of what it created. No
// libbpf here, so that readers of samples need none.
#ifndef PATHWISE_BPF_PROGRAM_STATS_H_
#define PATHWISE_BPF_PROGRAM_STATS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace pathwise::bpf {

// Run statistics of one loaded program (bpf_prog_info).
struct ProgramStats {
  std::string name;    // kernel program name, e.g. "pw_done_btf"
  std::string attach;  // e.g. "tp_btf/block_rq_complete"
  uint32_t id = 0;
  uint64_t run_time_ns = 0;  // 0 unless kernel.bpf_stats_enabled
  uint64_t run_count = 0;    // idem
  uint64_t recursion_misses = 0;
};

// Kernel IDs of what a loaded object created, for leak checks.
struct ObjectIds {
  std::vector<uint32_t> programs;
  std::vector<uint32_t> maps;
  std::vector<uint32_t> links;
};

}  // namespace pathwise::bpf

#endif  // PATHWISE_BPF_PROGRAM_STATS_H_

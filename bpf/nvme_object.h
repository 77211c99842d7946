// SPDX-License-Identifier: Apache-2.0
// The nvme object (bpf/pathwise_nvme.bpf.c): nvme_complete_rq of nvme-core,
// counting per path the completions with a non-zero NVMe status by class
// and the completions of retried commands. nvme-core may be loaded after
// the agent starts, so attaching is a separate step that may be retried;
// the object reuses the block object's per-path and counter maps.
#ifndef PATHWISE_BPF_NVME_OBJECT_H_
#define PATHWISE_BPF_NVME_OBJECT_H_

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bpf/kernel_btf.h"
#include "bpf/program_stats.h"
#include "bpf/status.h"

struct pathwise_nvme;

namespace pathwise::bpf {

enum class NvmeAttachState {
  kDisabled,     // SamplerOptions.nvme == false
  kAttached,     // nvme_complete_rq program attached
  kNotLoaded,    // nvme-core not loaded; retried on every Read()
  kUnavailable,  // cannot be used here (see the message)
};

// NVMe completion counters of one path.
// What one read of the nvme object's maps returns.
// Its counters live in the block object's maps (BlockSample::paths), read
// once there.
struct NvmeSample {
  std::vector<ProgramStats> programs;
};

class NvmeObject {
 public:
  // Loads and attaches the nvme_complete_rq program against `layout`,
  // reusing the block object's maps (fds).
  static absl::StatusOr<std::unique_ptr<NvmeObject>> Load(
      const NvmeLayout& layout, bool use_btf, int path_map_fd,
      int counters_map_fd);

  ~NvmeObject();
  NvmeObject(const NvmeObject&) = delete;
  NvmeObject& operator=(const NvmeObject&) = delete;

  absl::StatusOr<NvmeSample> Read() const;
  void AppendIds(ObjectIds& out) const;

 private:
  explicit NvmeObject(pathwise_nvme* skel) : skel_(skel) {}

  pathwise_nvme* skel_;
};

// The outcome of one attempt to attach the nvme object.
struct NvmeAttach {
  std::unique_ptr<NvmeObject> object;  // set iff state == kAttached
  NvmeAttachState state = NvmeAttachState::kUnavailable;
  std::string message;  // why not, or how it attached
};

// Finds nvme-core's BTF (module or vmlinux), reads the nvme_request layout
// and loads the object, tp_btf first and raw_tp otherwise. kNotLoaded when
// nvme-core is not loaded yet.
NvmeAttach AttachNvme(int path_map_fd, int counters_map_fd);

// Whether nvme-core is loaded now (a kNotLoaded attach is worth retrying).
bool NvmeCoreLoaded();

}  // namespace pathwise::bpf

#endif  // PATHWISE_BPF_NVME_OBJECT_H_

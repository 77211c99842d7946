// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the loaders of pathwise's BPF objects (block_object,
// nvme_object): libbpf error reporting, per-CPU map reading and the kernel
// IDs and run statistics of an object's programs, maps and links.
// Internal to bpf/: included by its .cc files only.
#ifndef PATHWISE_BPF_OBJECT_UTIL_H_
#define PATHWISE_BPF_OBJECT_UTIL_H_

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "bpf/program_stats.h"

extern "C" {
#include "bpf/pathwise_bpf.h"
}

namespace pathwise::bpf {

// Size of the verifier log kept for error messages of a failed load.
inline constexpr size_t kVerifierLogSize = 1 << 20;

std::string Errno(int err);

// A load failure with the verifier log's tail; EPERM/EACCES without a log
// is reported as missing privileges.
absl::Status LoadError(const std::string& what, int err, const char* log);

// Keeps an object's settings map (.rodata), before load, out of the
// vmalloc area: libbpf makes it mmap-able, which vmalloc-allocates it
// (4 KiB pages), where a small unmappable array is kmalloc-allocated in
// the kernel's direct map. The programs read it at every I/O; on the
// benchmark host its page cost ~10 ns per run in the issue program
// (bench/results/bpf_own_stamp_ab.txt). pathwise writes the settings only
// before load: after it, libbpf sets the skeleton's pointer to an
// unmappable map to NULL.
void KeepSettingsUnmapped(bpf_map* rodata);

template <typename Info>
absl::StatusOr<Info> GetInfo(int fd) {
  Info info = {};
  uint32_t len = sizeof(info);
  if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0) {
    return absl::InternalError(
        absl::StrCat("bpf_obj_get_info_by_fd: ", Errno(errno)));
  }
  return info;
}

// Calls fn(key, value) with the raw bytes of every entry of a map: key_size
// and value_size bytes (for a per-CPU map, value_size covers every possible
// CPU's copy). An entry deleted while iterating is skipped; an error of fn
// stops the walk and is returned.
absl::Status ForEachEntry(
    int map_fd, size_t key_size, size_t value_size,
    const std::function<absl::Status(absl::Span<const uint8_t>,
                                     absl::Span<const uint8_t>)>& fn);

// IDs and run statistics of the programs and maps of a libbpf object.
void AppendObjectIds(const struct bpf_object* obj, ObjectIds& out);
void AppendLinkId(const struct bpf_link* link, ObjectIds& out);
void AppendProgramStats(const struct bpf_object* obj,
                        std::vector<ProgramStats>& out);

}  // namespace pathwise::bpf

#endif  // PATHWISE_BPF_OBJECT_UTIL_H_

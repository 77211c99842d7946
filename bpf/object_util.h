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
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
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

// Calls fn(key, values) for every key of a per-CPU map, with one value per
// possible CPU.
template <typename K, typename V, typename Fn>
absl::Status ForEachPerCpu(int map_fd, int ncpus, Fn&& fn) {
  std::vector<V> values(static_cast<size_t>(ncpus));
  K key{};
  K next{};
  const K* prev = nullptr;
  while (true) {
    if (bpf_map_get_next_key(map_fd, prev, &next) != 0) {
      if (errno == ENOENT) break;
      return absl::InternalError(
          absl::StrCat("bpf_map_get_next_key: ", Errno(errno)));
    }
    if (bpf_map_lookup_elem(map_fd, &next, values.data()) == 0) {
      fn(next, values);
    } else if (errno != ENOENT) {
      return absl::InternalError(
          absl::StrCat("bpf_map_lookup_elem: ", Errno(errno)));
    }
    key = next;
    prev = &key;
  }
  return absl::OkStatus();
}

// The shared per-path map (pw_path, one value per path), by kernel dev_t.
absl::StatusOr<std::map<uint32_t, pw_path_val>> ReadPathMap(int fd);
// The shared counter slot (pw_counters), summed over CPUs.
absl::StatusOr<pw_counters> ReadCounters(int fd, int ncpus);

// IDs and run statistics of the programs and maps of a libbpf object.
void AppendObjectIds(const struct bpf_object* obj, ObjectIds& out);
void AppendLinkId(const struct bpf_link* link, ObjectIds& out);
void AppendProgramStats(const struct bpf_object* obj,
                        std::vector<ProgramStats>& out);

}  // namespace pathwise::bpf

#endif  // PATHWISE_BPF_OBJECT_UTIL_H_

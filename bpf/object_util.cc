// SPDX-License-Identifier: Apache-2.0
#include "bpf/object_util.h"

#include <cstring>

namespace pathwise::bpf {
namespace {

// The last `lines` lines of a verifier log, for error messages.
std::string LogTail(const std::string& log, size_t lines = 12) {
  std::vector<std::string> all;
  size_t pos = 0;
  while (pos < log.size()) {
    size_t nl = log.find('\n', pos);
    if (nl == std::string::npos) nl = log.size();
    if (nl > pos) all.push_back(log.substr(pos, nl - pos));
    pos = nl + 1;
  }
  const size_t from = all.size() > lines ? all.size() - lines : 0;
  std::string out;
  for (size_t i = from; i < all.size(); ++i) out += "\n  " + all[i];
  return out;
}

}  // namespace

std::string Errno(int err) { return strerror(err < 0 ? -err : err); }

void KeepSettingsUnmapped(bpf_map* rodata) {
  bpf_map__set_map_flags(rodata, bpf_map__map_flags(rodata) & ~BPF_F_MMAPABLE);
}

absl::Status LoadError(const std::string& what, int err, const char* log) {
  const std::string verifier_log(log ? log : "");
  if ((err == -EPERM || err == -EACCES) && verifier_log.empty()) {
    return absl::PermissionDeniedError(
        what +
        ": permission denied: loading BPF programs needs root (CAP_BPF, "
        "CAP_PERFMON and CAP_SYS_RESOURCE)");
  }
  return absl::FailedPreconditionError(
      what + " failed: " + Errno(err) +
      (verifier_log.empty() ? std::string()
                            : "; verifier log tail:" + LogTail(verifier_log)));
}

absl::Status ForEachEntry(
    int map_fd, size_t key_size, size_t value_size,
    const std::function<absl::Status(absl::Span<const uint8_t>,
                                     absl::Span<const uint8_t>)>& fn) {
  std::vector<uint8_t> key(key_size), next(key_size), value(value_size);
  const uint8_t* prev = nullptr;
  while (true) {
    if (bpf_map_get_next_key(map_fd, prev, next.data()) != 0) {
      if (errno == ENOENT) break;
      return absl::InternalError(
          absl::StrCat("bpf_map_get_next_key: ", Errno(errno)));
    }
    if (bpf_map_lookup_elem(map_fd, next.data(), value.data()) == 0) {
      if (absl::Status st = fn(next, value); !st.ok()) return st;
    } else if (errno != ENOENT) {
      return absl::InternalError(
          absl::StrCat("bpf_map_lookup_elem: ", Errno(errno)));
    }
    key.swap(next);
    prev = key.data();
  }
  return absl::OkStatus();
}

void AppendObjectIds(const struct bpf_object* obj, ObjectIds& out) {
  if (!obj) return;
  struct bpf_program* prog;
  bpf_object__for_each_program(prog, obj) {
    const int fd = bpf_program__fd(prog);
    if (fd < 0) continue;
    if (auto info = GetInfo<bpf_prog_info>(fd); info.ok()) {
      out.programs.push_back(info->id);
    }
  }
  struct bpf_map* map;
  bpf_object__for_each_map(map, obj) {
    const int fd = bpf_map__fd(map);
    if (fd < 0) continue;
    if (auto info = GetInfo<bpf_map_info>(fd); info.ok()) {
      out.maps.push_back(info->id);
    }
  }
}

void AppendLinkId(const struct bpf_link* link, ObjectIds& out) {
  if (!link) return;
  if (auto info = GetInfo<bpf_link_info>(bpf_link__fd(link)); info.ok()) {
    out.links.push_back(info->id);
  }
}

void AppendProgramStats(const struct bpf_object* obj,
                        std::vector<ProgramStats>& out) {
  if (!obj) return;
  struct bpf_program* prog;
  bpf_object__for_each_program(prog, obj) {
    const int fd = bpf_program__fd(prog);
    if (fd < 0) continue;
    absl::StatusOr<bpf_prog_info> info = GetInfo<bpf_prog_info>(fd);
    if (!info.ok()) continue;
    ProgramStats ps;
    ps.name = info->name;
    ps.attach = bpf_program__section_name(prog);
    ps.id = info->id;
    ps.run_time_ns = info->run_time_ns;
    ps.run_count = info->run_cnt;
    ps.recursion_misses = info->recursion_misses;
    out.push_back(std::move(ps));
  }
}

}  // namespace pathwise::bpf

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

absl::StatusOr<std::map<uint32_t, pw_path_val>> ReadPathMap(int fd) {
  std::map<uint32_t, pw_path_val> out;
  // A plain hash is one value per key: ForEachPerCpu with one "CPU".
  absl::Status st = ForEachPerCpu<__u32, pw_path_val>(
      fd, 1, [&](const __u32& dev, const std::vector<pw_path_val>& vals) {
        out[dev] = vals[0];
      });
  if (!st.ok()) return st;
  return out;
}

absl::StatusOr<pw_counters> ReadCounters(int fd, int ncpus) {
  std::vector<pw_counters> vals(static_cast<size_t>(ncpus));
  __u32 zero = 0;
  if (bpf_map_lookup_elem(fd, &zero, vals.data()) != 0) {
    return absl::InternalError(
        absl::StrCat("reading pw_counters: ", Errno(errno)));
  }
  pw_counters sum = {};
  for (const pw_counters& c : vals) {
    for (int i = 0; i < PW_CNT_COUNT; ++i) sum.v[i] += c.v[i];
  }
  return sum;
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

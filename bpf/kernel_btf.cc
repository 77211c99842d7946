// SPDX-License-Identifier: Apache-2.0
#include "bpf/kernel_btf.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace pathwise::bpf {
namespace {

std::string_view Name(const struct btf* btf, uint32_t off) {
  const char* s = btf__name_by_offset(btf, off);
  return s ? std::string_view(s) : std::string_view();
}

// Calls fn(name, value) for every enumerator of enum type `t`.
template <typename Fn>
void ForEachEnumerator(const struct btf* btf, const struct btf_type* t,
                       Fn&& fn) {
  const int n = btf_vlen(t);
  if (btf_is_enum(t)) {
    const struct btf_enum* e = btf_enum(t);
    for (int i = 0; i < n; ++i) {
      fn(Name(btf, e[i].name_off), static_cast<int64_t>(e[i].val));
    }
  } else if (btf_is_enum64(t)) {
    const struct btf_enum64* e = btf_enum64(t);
    for (int i = 0; i < n; ++i) {
      fn(Name(btf, e[i].name_off),
         static_cast<int64_t>(btf_enum64_value(&e[i])));
    }
  }
}

std::optional<uint32_t> MemberByteOffset(const struct btf* btf,
                                         const struct btf_type* t,
                                         std::string_view member) {
  const struct btf_member* m = btf_members(t);
  for (int i = 0; i < btf_vlen(t); ++i) {
    if (Name(btf, m[i].name_off) == member) {
      const uint32_t bits = btf_member_bit_offset(t, i);
      if (bits % 8 != 0 || btf_member_bitfield_size(t, i) != 0) {
        return std::nullopt;
      }
      return bits / 8;
    }
  }
  return std::nullopt;
}

const struct btf_type* FindStruct(const struct btf* btf,
                                  std::string_view name) {
  const int id =
      btf__find_by_name_kind(btf, std::string(name).c_str(), BTF_KIND_STRUCT);
  return id > 0 ? btf__type_by_id(btf, id) : nullptr;
}

}  // namespace

std::optional<int64_t> FindEnumerator(const struct btf* btf,
                                      std::string_view name) {
  const uint32_t n = btf__type_cnt(btf);
  for (uint32_t id = 1; id < n; ++id) {
    const struct btf_type* t = btf__type_by_id(btf, id);
    if (!t || !(btf_is_enum(t) || btf_is_enum64(t))) continue;
    std::optional<int64_t> found;
    ForEachEnumerator(btf, t, [&](std::string_view n, int64_t v) {
      if (!found && n == name) found = v;
    });
    if (found) return found;
  }
  return std::nullopt;
}

absl::StatusOr<BlockLayout> ReadBlockLayout(const struct btf* vmlinux) {
  if (vmlinux == nullptr) {
    return absl::FailedPreconditionError("no kernel BTF");
  }
  BlockLayout out;
  out.op_class.fill(Op::kOther);

  // REQ_OP_* values: enum req_op (>= 6.0) or enum req_opf (older).
  bool have_ops = false;
  const uint32_t n = btf__type_cnt(vmlinux);
  for (uint32_t id = 1; id < n && !have_ops; ++id) {
    const struct btf_type* t = btf__type_by_id(vmlinux, id);
    if (!t || !(btf_is_enum(t) || btf_is_enum64(t))) continue;
    bool has_read = false;
    ForEachEnumerator(vmlinux, t, [&](std::string_view name, int64_t) {
      if (name == "REQ_OP_READ") has_read = true;
    });
    if (!has_read) continue;
    have_ops = true;
    ForEachEnumerator(vmlinux, t, [&](std::string_view name, int64_t v) {
      std::optional<Op> op = OpClassForReqOpName(name);
      if (op && v >= 0 && v < 256) out.op_class[v] = *op;
    });
  }
  if (!have_ops) {
    return absl::FailedPreconditionError(
        "kernel BTF has no REQ_OP_READ enumerator (enum req_op/req_opf)");
  }

  std::optional<int64_t> drv = FindEnumerator(vmlinux, "__REQ_DRV");
  if (!drv || *drv < 0 || *drv > 31) {
    return absl::FailedPreconditionError(
        "kernel BTF has no __REQ_DRV enumerator (enum req_flag_bits)");
  }
  out.req_nvme_mpath_mask = 1u << *drv;

  if (std::optional<int64_t> v = FindEnumerator(vmlinux, "QUEUE_FLAG_STATS");
      v && *v >= 0 && *v < 64) {
    out.queue_flag_stats_bit = static_cast<uint32_t>(*v);
  } else {
    out.queue_flag_stats_bit = kQueueFlagStatsMacro;
    out.fallbacks.push_back(
        absl::StrCat("QUEUE_FLAG_STATS not in BTF, using macro value ",
                     kQueueFlagStatsMacro));
  }
  if (std::optional<int64_t> v = FindEnumerator(vmlinux, "__RQF_STATS");
      v && *v >= 0 && *v < 32) {
    out.rqf_stats_mask = 1u << *v;
  } else {
    out.rqf_stats_mask = kRqfStatsMacro;
    out.fallbacks.push_back(
        absl::StrCat("__RQF_STATS not in BTF, using macro value 1 << 17"));
  }

  // Fields the programs read (pathwise_vmlinux.h); CO-RE would fail the
  // load anyway, but name the missing field here.
  const struct btf_type* rq = FindStruct(vmlinux, "request");
  const struct btf_type* q = FindStruct(vmlinux, "request_queue");
  if (!rq || !q) {
    return absl::FailedPreconditionError(
        "kernel BTF lacks struct request or struct request_queue");
  }
  for (std::string_view f : {"q", "cmd_flags", "rq_flags", "__data_len", "bio",
                             "io_start_time_ns"}) {
    if (!MemberByteOffset(vmlinux, rq, f)) {
      return absl::FailedPreconditionError(
          absl::StrCat("kernel struct request has no field ", std::string(f)));
    }
  }
  if (!MemberByteOffset(vmlinux, q, "disk")) {
    return absl::FailedPreconditionError(
        "kernel struct request_queue has no field disk (needs Linux >= "
        "5.15)");
  }
  if (const struct btf_type* aux = FindStruct(vmlinux, "bpf_prog_aux")) {
    out.init_context_hidden =
        MemberByteOffset(vmlinux, aux, "init_owned").has_value();
  }
  return out;
}

absl::StatusOr<NvmeLayout> ReadNvmeLayout(const struct btf* vmlinux,
                                          const struct btf* nvme) {
  if (vmlinux == nullptr || nvme == nullptr) {
    return absl::FailedPreconditionError("no BTF for nvme-core");
  }
  const struct btf_type* rq = FindStruct(vmlinux, "request");
  if (!rq) return absl::FailedPreconditionError("no struct request in BTF");
  const struct btf_type* nr = FindStruct(nvme, "nvme_request");
  if (!nr) {
    return absl::FailedPreconditionError(
        "struct nvme_request not found in nvme-core's BTF");
  }
  NvmeLayout out;
  out.request_size = rq->size;
  std::optional<uint32_t> retries = MemberByteOffset(nvme, nr, "retries");
  std::optional<uint32_t> status = MemberByteOffset(nvme, nr, "status");
  if (!retries || !status) {
    return absl::FailedPreconditionError(
        "struct nvme_request lacks retries or status");
  }
  // The program reads 8 bytes from `retries` and takes status from them.
  if (*status <= *retries || *status + 2 > *retries + 8 ||
      *retries + 8 > nr->size) {
    return absl::FailedPreconditionError(
        absl::StrCat("unexpected struct nvme_request layout: retries at ",
                     *retries, ", status at ", *status));
  }
  out.retries_offset = *retries;
  out.status_offset = *status;
  return out;
}

namespace {

// Finds the BTF object fd of kernel module `module`; -1 if not loaded.
int ModuleBtfFd(std::string_view module) {
  uint32_t id = 0;
  while (bpf_btf_get_next_id(id, &id) == 0) {
    const int fd = bpf_btf_get_fd_by_id(id);
    if (fd < 0) continue;
    char name[64] = {};
    struct bpf_btf_info info = {};
    info.name = reinterpret_cast<uint64_t>(name);
    info.name_len = sizeof(name);
    uint32_t len = sizeof(info);
    if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0 &&
        std::string_view(name) == module) {
      return fd;
    }
    close(fd);
  }
  return -1;
}

}  // namespace

bool ProbeTpBtf(std::string_view tp, std::string_view module,
                std::string* why) {
  const std::string typedef_name = "btf_trace_" + std::string(tp);
  int btf_fd = -1;
  int type_id = -1;
  if (module.empty()) {
    type_id =
        libbpf_find_vmlinux_btf_id(std::string(tp).c_str(), BPF_TRACE_RAW_TP);
    if (type_id < 0) {
      if (why) *why = typedef_name + " not in vmlinux BTF";
      return false;
    }
  } else {
    struct btf* vmlinux = btf__load_vmlinux_btf();
    if (!vmlinux) {
      if (why) *why = "cannot load vmlinux BTF";
      return false;
    }
    struct btf* mod =
        btf__load_module_btf(std::string(module).c_str(), vmlinux);
    if (!mod) {
      btf__free(vmlinux);
      if (why) *why = "no BTF for module " + std::string(module);
      return false;
    }
    type_id =
        btf__find_by_name_kind(mod, typedef_name.c_str(), BTF_KIND_TYPEDEF);
    btf__free(mod);
    btf__free(vmlinux);
    if (type_id < 0) {
      if (why) *why = typedef_name + " not in " + std::string(module) + " BTF";
      return false;
    }
    btf_fd = ModuleBtfFd(module);
    if (btf_fd < 0) {
      if (why) *why = "module " + std::string(module) + " BTF object not found";
      return false;
    }
  }
  const struct bpf_insn insns[] = {
      {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
      {.code = BPF_JMP | BPF_EXIT},
  };
  LIBBPF_OPTS(bpf_prog_load_opts, opts);
  opts.expected_attach_type = BPF_TRACE_RAW_TP;
  opts.attach_btf_id = static_cast<uint32_t>(type_id);
  if (btf_fd >= 0) opts.attach_btf_obj_fd = static_cast<uint32_t>(btf_fd);
  const int fd =
      bpf_prog_load(BPF_PROG_TYPE_TRACING, "pw_probe", "GPL", insns, 2, &opts);
  const int err = errno;
  if (btf_fd >= 0) close(btf_fd);
  if (fd < 0) {
    if (why) {
      *why =
          "tp_btf/" + std::string(tp) + " probe load failed: " + strerror(err);
    }
    return false;
  }
  close(fd);
  return true;
}

}  // namespace pathwise::bpf

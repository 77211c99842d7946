// SPDX-License-Identifier: Apache-2.0
#include "bpf/nvme_object.h"

#include <bpf/btf.h>
#include <unistd.h>

#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "bpf/object_util.h"
#include "pathwise_nvme.skel.h"

namespace pathwise::bpf {
namespace {

constexpr char kNvmeModule[] = "nvme_core";

}  // namespace

absl::StatusOr<std::unique_ptr<NvmeObject>> NvmeObject::Load(
    const NvmeLayout& layout, bool use_btf, int path_map_fd,
    int counters_map_fd) {
  std::string log(kVerifierLogSize, '\0');
  LIBBPF_OPTS(bpf_object_open_opts, open_opts);
  open_opts.kernel_log_buf = log.data();
  open_opts.kernel_log_size = log.size();
  pathwise_nvme* skel = pathwise_nvme__open_opts(&open_opts);
  if (!skel) {
    return absl::InternalError(
        absl::StrCat("opening the nvme BPF object: ", Errno(errno)));
  }
  absl::Cleanup destroy = [&] { pathwise_nvme__destroy(skel); };
  KeepSettingsUnmapped(skel->maps.rodata);
  skel->rodata->request_size = layout.request_size;
  skel->rodata->nvme_retries_off = layout.retries_offset;
  skel->rodata->nvme_status_shift =
      (layout.status_offset - layout.retries_offset) * 8;
  if (int err = bpf_map__reuse_fd(skel->maps.pw_path, path_map_fd); err != 0) {
    return absl::InternalError(absl::StrCat("reusing pw_path: ", Errno(err)));
  }
  if (int err = bpf_map__reuse_fd(skel->maps.pw_counters, counters_map_fd);
      err != 0) {
    return absl::InternalError(
        absl::StrCat("reusing pw_counters: ", Errno(err)));
  }
  bpf_program__set_autoload(skel->progs.pw_nvme_btf, use_btf);
  bpf_program__set_autoload(skel->progs.pw_nvme_raw, !use_btf);
  if (int err = pathwise_nvme__load(skel); err != 0) {
    return LoadError(absl::StrCat("loading the nvme_complete_rq program (",
                                  use_btf ? "tp_btf" : "raw_tp", ")"),
                     err, log.c_str());
  }
  if (int err = pathwise_nvme__attach(skel); err != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("attaching to nvme_complete_rq: ", Errno(err)));
  }
  std::move(destroy).Cancel();
  return std::unique_ptr<NvmeObject>(new NvmeObject(skel));
}

NvmeObject::~NvmeObject() { pathwise_nvme__destroy(skel_); }

void NvmeObject::AppendIds(ObjectIds& out) const {
  AppendObjectIds(skel_->obj, out);
  AppendLinkId(skel_->links.pw_nvme_btf, out);
  AppendLinkId(skel_->links.pw_nvme_raw, out);
}

absl::StatusOr<NvmeSample> NvmeObject::Read() const {
  NvmeSample out;
  AppendProgramStats(skel_->obj, out.programs);
  return out;
}

bool NvmeCoreLoaded() { return access("/sys/module/nvme_core", F_OK) == 0; }

NvmeAttach AttachNvme(int path_map_fd, int counters_map_fd) {
  NvmeAttach out;
  struct btf* vmlinux = btf__load_vmlinux_btf();
  if (!vmlinux) {
    out.message = "cannot load vmlinux BTF";
    return out;
  }
  absl::Cleanup free_vmlinux = [&] { btf__free(vmlinux); };
  const bool in_vmlinux =
      btf__find_by_name_kind(vmlinux, "nvme_request", BTF_KIND_STRUCT) > 0;
  struct btf* mod = nullptr;
  if (!in_vmlinux) {
    if (!NvmeCoreLoaded()) {
      out.state = NvmeAttachState::kNotLoaded;
      out.message = "nvme-core is not loaded; will attach when it is";
      return out;
    }
    mod = btf__load_module_btf(kNvmeModule, vmlinux);
    if (!mod) {
      out.message =
          "no BTF for nvme_core (/sys/kernel/btf/nvme_core; kernel needs "
          "CONFIG_DEBUG_INFO_BTF_MODULES)";
      return out;
    }
  }
  absl::Cleanup free_mod = [&] {
    if (mod) btf__free(mod);
  };
  absl::StatusOr<NvmeLayout> layout =
      ReadNvmeLayout(vmlinux, in_vmlinux ? vmlinux : mod);
  if (!layout.ok()) {
    out.message = std::string(layout.status().message());
    return out;
  }
  std::string why;
  const bool btf_ok =
      ProbeTpBtf("nvme_complete_rq", in_vmlinux ? "" : kNvmeModule, &why);
  std::string prefix;
  if (btf_ok) {
    absl::StatusOr<std::unique_ptr<NvmeObject>> obj = NvmeObject::Load(
        *layout, /*use_btf=*/true, path_map_fd, counters_map_fd);
    if (obj.ok()) {
      out.object = *std::move(obj);
    } else {
      prefix = absl::StrCat("tp_btf failed (", obj.status().message(), "); ");
    }
  } else {
    prefix = absl::StrCat("tp_btf unavailable (", why, "); ");
  }
  if (!out.object) {
    absl::StatusOr<std::unique_ptr<NvmeObject>> obj = NvmeObject::Load(
        *layout, /*use_btf=*/false, path_map_fd, counters_map_fd);
    if (!obj.ok()) {
      out.message = absl::StrCat(prefix, obj.status().message());
      return out;
    }
    out.object = *std::move(obj);
  }
  out.state = NvmeAttachState::kAttached;
  out.message = absl::StrCat(prefix, "attached to nvme_complete_rq via ",
                             prefix.empty() ? "tp_btf" : "raw_tp");
  return out;
}

}  // namespace pathwise::bpf

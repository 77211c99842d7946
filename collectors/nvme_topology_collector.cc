// SPDX-License-Identifier: Apache-2.0
#include "collectors/nvme_topology_collector.h"

#include <dirent.h>
#include <syslog.h>

// libnvme 1.3's headers have no extern "C" guards of their own.
extern "C" {
#include <nvme/filters.h>
#include <nvme/tree.h>
}

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "absl/base/const_init.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "collectors/topology_builder.h"
#include "spdlog/spdlog.h"

namespace pathwise::collectors {
namespace {

// libnvme 1.3 keeps process-global state (the current root, the default
// host), so scans are serialised. This guards the library, it is not state
// of ours.
ABSL_CONST_INIT absl::Mutex libnvme_mu(absl::kConstInit);

std::string Str(const char* s) { return s ? std::string(s) : std::string(); }

// A libnvme string attribute: nullopt when libnvme has none.
std::optional<std::string> Opt(const char* s) {
  return s ? std::optional<std::string>(s) : std::nullopt;
}

// Captures libnvme's log output (it writes to a FILE*) so it goes through
// our logger instead of straight to stderr.
class LibnvmeLog {
 public:
  LibnvmeLog() { fp_ = open_memstream(&buf_, &len_); }
  ~LibnvmeLog() {
    if (fp_) fclose(fp_);
    if (buf_ && len_ > 0) {
      for (absl::string_view line : absl::StrSplit(
               absl::string_view(buf_, len_), '\n', absl::SkipEmpty())) {
        spdlog::debug("libnvme: {}", std::string(line));
      }
    }
    free(buf_);
  }
  FILE* fp() const { return fp_; }

 private:
  FILE* fp_ = nullptr;
  char* buf_ = nullptr;
  size_t len_ = 0;
};

// A diag/ counter: nullopt when the attribute does not exist (a kernel
// without it, or a device that went away since the walk), which is no error.
RawCounter ReadCounter(const SysfsReader& reader, const std::string& rel) {
  RawAttr v = reader.ReadAttr(rel);
  if (!v.ok() && absl::IsNotFound(v.status())) return std::nullopt;
  return v;
}

// `dir` is the device's sysfs directory (block/<path>, block/<head>,
// class/nvme/<controller>).
RawPathDiag ReadPathDiag(const SysfsReader& reader, const std::string& dir) {
  RawPathDiag d;
  d.failovers = ReadCounter(reader, dir + "/diag/multipath_failover_count");
  d.command_retries =
      ReadCounter(reader, dir + "/diag/" + d.command_retries_attr);
  if (!d.command_retries) {
    d.command_retries_attr = "command_retry_count";
    d.command_retries =
        ReadCounter(reader, dir + "/diag/" + d.command_retries_attr);
  }
  d.command_errors = ReadCounter(reader, dir + "/diag/command_error_count");
  return d;
}
RawHeadDiag ReadHeadDiag(const SysfsReader& reader, const std::string& dir) {
  return {.requeued_no_usable_path = ReadCounter(
              reader, dir + "/diag/io_requeue_no_usable_path_count"),
          .failed_no_available_path = ReadCounter(
              reader, dir + "/diag/io_fail_no_available_path_count")};
}
RawControllerDiag ReadControllerDiag(const SysfsReader& reader,
                                     const std::string& dir) {
  return {
      .command_errors = ReadCounter(reader, dir + "/diag/command_error_count"),
      .resets = ReadCounter(reader, dir + "/diag/reset_count"),
      .reconnects = ReadCounter(reader, dir + "/diag/reconnect_count")};
}

struct RootDeleter {
  void operator()(nvme_root* r) const { nvme_free_tree(r); }
};

// Lists class/nvme and has libnvme scan each controller into `root` (sysfs
// only: no admin commands). Controllers it could not scan are reported in
// `raw.scan_errors`; an error is returned only when nothing can be listed.
absl::Status ScanControllers(nvme_root* root, const SysfsReader& reader,
                             RawTopology& raw) {
  struct dirent** ents = nullptr;
  int n = nvme_scan_ctrls(&ents);
  if (n < 0) {
    const int err = errno;
    // No /sys/class/nvme: the nvme driver is not loaded, so there is no NVMe.
    if (err == ENOENT) return absl::OkStatus();
    return absl::UnavailableError(
        absl::StrCat("class/nvme: ", std::strerror(err)));
  }
  for (int i = 0; i < n; ++i) {
    errno = 0;
    if (nvme_scan_ctrl(root, ents[i]->d_name) == nullptr &&
        // A controller deleted between listing and scanning (hotplug,
        // disconnect) is simply gone, not an error.
        reader.Exists(absl::StrCat("class/nvme/", ents[i]->d_name))) {
      raw.scan_errors.push_back(absl::UnavailableError(
          absl::StrCat("class/nvme/", ents[i]->d_name,
                       ": libnvme could not scan controller: ",
                       std::strerror(errno ? errno : EIO))));
    }
    free(ents[i]);
  }
  free(ents);
  return absl::OkStatus();
}

RawSubsystem ReadSubsystem(nvme_subsystem_t s, const std::string& name,
                           const SysfsReader& reader) {
  const std::string dir = absl::StrCat("class/nvme-subsystem/", name);
  return {.name = name,
          .nqn = Str(nvme_subsystem_get_nqn(s)),
          .iopolicy = reader.ReadAttr(dir + "/iopolicy"),
          .model = reader.ReadAttr(dir + "/model"),
          .serial = reader.ReadAttr(dir + "/serial")};
}

RawController ReadController(nvme_ctrl_t c, const std::string& subsystem,
                             const SysfsReader& reader) {
  RawController ctrl;
  ctrl.name = Str(nvme_ctrl_get_name(c));
  ctrl.subsystem = subsystem;
  ctrl.transport = Opt(nvme_ctrl_get_transport(c));
  ctrl.address = Opt(nvme_ctrl_get_address(c));
  ctrl.traddr = Str(nvme_ctrl_get_traddr(c));
  ctrl.trsvcid = Str(nvme_ctrl_get_trsvcid(c));
  ctrl.host_traddr = Str(nvme_ctrl_get_host_traddr(c));
  ctrl.host_iface = Str(nvme_ctrl_get_host_iface(c));
  ctrl.state = Opt(nvme_ctrl_get_state(c));
  ctrl.cntlid =
      reader.ReadAttr(absl::StrCat("class/nvme/", ctrl.name, "/cntlid"));
  ctrl.numa_node = Opt(nvme_ctrl_get_numa_node(c));
  ctrl.queue_count = Opt(nvme_ctrl_get_queue_count(c));
  ctrl.diag = ReadControllerDiag(reader, "class/nvme/" + ctrl.name);
  return ctrl;
}

// Reads a path and, the first time one of its paths is met, its head.
RawPath ReadPath(nvme_path_t p, const std::string& controller,
                 const SysfsReader& reader,
                 std::map<std::string, RawHead>& heads) {
  RawPath path;
  path.name = Str(nvme_path_get_name(p));
  path.controller = controller;
  path.ana_state = Opt(nvme_path_get_ana_state(p));
  // Since 5.15 the kernel gives hidden disks no dev_t in sysfs
  // (device_add_disk() leaves ddev->devt unset for GENHD_FL_HIDDEN), so a
  // path usually has no `dev` attribute; its major:minor is then unknown to
  // userspace, which is normal and not an error. Older kernels have it, and
  // we read it.
  const std::string dev = absl::StrCat("block/", path.name, "/dev");
  if (reader.Exists(dev)) path.dev = reader.ReadAttr(dev);
  path.diag = ReadPathDiag(reader, "block/" + path.name);
  // The head's attributes are read here, where /sys is; a path name that
  // names no head is reported by the builder.
  absl::StatusOr<std::string> head = HeadNameOfPath(path.name);
  if (head.ok() && !heads.contains(*head)) {
    const std::string hdir = absl::StrCat("block/", *head);
    heads.emplace(*head, RawHead{.nsid = reader.ReadAttr(hdir + "/nsid"),
                                 .dev = reader.ReadAttr(hdir + "/dev"),
                                 .diag = ReadHeadDiag(reader, hdir)});
  }
  return path;
}

// The raw scan: everything the builder needs, read from libnvme and sysfs
// under one hold of the libnvme lock.
absl::StatusOr<RawTopology> ScanRaw(const SysfsReader& reader) {
  absl::MutexLock lock(&libnvme_mu);
  LibnvmeLog log;
  std::unique_ptr<nvme_root, RootDeleter> root(
      nvme_create_root(log.fp(), LOG_NOTICE));
  if (!root) return absl::InternalError("nvme_create_root failed");

  RawTopology raw;
  if (absl::Status st = ScanControllers(root.get(), reader, raw); !st.ok()) {
    return st;
  }
  std::set<std::string> subsystems_seen;
  nvme_host_t h;
  nvme_subsystem_t s;
  nvme_ctrl_t c;
  nvme_path_t p;
  nvme_for_each_host(root.get(), h) {
    nvme_for_each_subsystem(h, s) {
      const char* sname = nvme_subsystem_get_name(s);
      if (sname == nullptr) continue;  // no sysfs entry behind it
      const std::string sub_name = sname;
      // Without a host NQN (PCIe and no /etc/nvme/hostnqn) libnvme 1.3 may
      // file one kernel subsystem under several generated hosts; its
      // attributes are read once.
      if (subsystems_seen.insert(sub_name).second) {
        raw.subsystems.push_back(ReadSubsystem(s, sub_name, reader));
      }
      nvme_subsystem_for_each_ctrl(s, c) {
        RawController ctrl = ReadController(c, sub_name, reader);
        nvme_ctrl_for_each_path(c, p) {
          raw.paths.push_back(ReadPath(p, ctrl.name, reader, raw.heads));
        }
        raw.controllers.push_back(std::move(ctrl));
      }
    }
  }
  return raw;
}

}  // namespace

absl::Status NvmeTopologyCollector::Read(model::Topology& topology) {
  absl::StatusOr<RawTopology> raw = ScanRaw(reader_);
  if (!raw.ok()) return raw.status();
  BuiltTopology built = BuildTopology(*raw);
  topology = std::move(built.topology);
  // What the live page, /healthz and the log say on a host without
  // multipath depends on whether nvme_core is loaded at all.
  topology.subsystem_class = reader_.Exists("class/nvme-subsystem");
  return built.status;
}

}  // namespace pathwise::collectors

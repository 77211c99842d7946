// SPDX-License-Identifier: Apache-2.0
#include "collectors/nvme_topology_collector.h"

#include <map>
#include <optional>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "collectors/queue_parse.h"  // ParseFabricsAddress
#include "collectors/topology_builder.h"
#include "model/types.h"

namespace pathwise::collectors {
namespace {

// A string attribute: nullopt when it is missing, unreadable or empty.
std::optional<std::string> Attr(const SysfsReader& reader,
                                const std::string& rel) {
  absl::StatusOr<std::string> v = reader.ReadAttr(rel);
  if (!v.ok() || v->empty()) return std::nullopt;
  return *std::move(v);
}

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

RawSubsystem ReadSubsystem(const std::string& name, const SysfsReader& reader) {
  const std::string dir = absl::StrCat("class/nvme-subsystem/", name);
  return {.name = name,
          .nqn = Attr(reader, dir + "/subsysnqn").value_or(""),
          .iopolicy = reader.ReadAttr(dir + "/iopolicy"),
          .model = reader.ReadAttr(dir + "/model"),
          .serial = reader.ReadAttr(dir + "/serial")};
}

RawController ReadController(const std::string& name,
                             const std::string& subsystem,
                             const SysfsReader& reader) {
  const std::string cdir = absl::StrCat("class/nvme/", name);
  RawController ctrl;
  ctrl.name = name;
  ctrl.subsystem = subsystem;
  ctrl.transport = Attr(reader, cdir + "/transport");
  ctrl.address = Attr(reader, cdir + "/address");
  if (ctrl.transport == "pcie") {
    // The PCI address itself.
    ctrl.traddr = ctrl.address.value_or("");
  } else if (ctrl.address) {
    // "traddr=...,trsvcid=...,host_traddr=...,host_iface=..." (fabrics).
    const FabricsAddress a = ParseFabricsAddress(*ctrl.address);
    ctrl.traddr = a.traddr;
    ctrl.trsvcid = a.trsvcid;
    ctrl.host_traddr = a.host_traddr;
    ctrl.host_iface = a.host_iface;
  }
  ctrl.state = Attr(reader, cdir + "/state");
  ctrl.cntlid = reader.ReadAttr(cdir + "/cntlid");
  ctrl.numa_node = Attr(reader, cdir + "/numa_node");
  ctrl.queue_count = Attr(reader, cdir + "/queue_count");
  ctrl.diag = ReadControllerDiag(reader, cdir);
  return ctrl;
}

// Reads a path and, the first time one of its paths is met, its head;
// nullopt when the path went away while it was read.
std::optional<RawPath> ReadPath(const std::string& name,
                                const std::string& controller,
                                const SysfsReader& reader,
                                std::map<std::string, RawHead>& heads) {
  RawPath path;
  path.name = name;
  path.controller = controller;
  const std::string pdir = absl::StrCat("class/nvme/", controller, "/", name);
  path.ana_state = Attr(reader, pdir + "/ana_state");
  // Since 5.15 the kernel gives hidden disks no dev_t in sysfs
  // (device_add_disk() leaves ddev->devt unset for GENHD_FL_HIDDEN), so a
  // path usually has no `dev` attribute; its major:minor is then unknown to
  // userspace, which is normal and not an error. Older kernels have it, and
  // we read it.
  const std::string dev = absl::StrCat("block/", path.name, "/dev");
  if (reader.Exists(dev)) path.dev = reader.ReadAttr(dev);
  path.diag = ReadPathDiag(reader, "block/" + path.name);
  if (!reader.Exists(pdir)) return std::nullopt;
  // A controller without ANA reporting has no ana_state attribute; the
  // kernel treats its paths as optimized (nvme_mpath_add_disk() sets
  // NVME_ANA_OPTIMIZED), and so does libnvme.
  if (!path.ana_state && !reader.Exists(pdir + "/ana_state")) {
    path.ana_state = "optimized";
  }
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

// The raw scan: everything the builder needs, read from sysfs. Controllers
// and paths come and go while it runs (a disconnect, a reset, hotplug):
// whatever vanished between listing and reading is left out, not reported.
absl::StatusOr<RawTopology> ScanRaw(const SysfsReader& reader) {
  RawTopology raw;
  absl::StatusOr<std::vector<std::string>> names = reader.ListDir("class/nvme");
  if (!names.ok()) {
    // No class/nvme: the nvme driver is not loaded, so there is no NVMe.
    if (absl::IsNotFound(names.status())) return raw;
    return absl::UnavailableError(names.status().message());
  }
  // Each subsystem lists its controllers as links in its directory.
  std::map<std::string, std::string> subsystem_of;
  absl::StatusOr<std::vector<std::string>> subsystems =
      reader.ListDir("class/nvme-subsystem");
  for (const std::string& sub :
       subsystems.value_or(std::vector<std::string>())) {
    absl::StatusOr<std::vector<std::string>> entries =
        reader.ListDir(absl::StrCat("class/nvme-subsystem/", sub));
    for (const std::string& e : entries.value_or(std::vector<std::string>())) {
      if (model::ControllerInstance(e) >= 0) subsystem_of.emplace(e, sub);
    }
  }
  std::set<std::string> subsystems_read;
  for (const std::string& name : *names) {
    if (model::ControllerInstance(name) < 0) continue;
    const std::string cdir = absl::StrCat("class/nvme/", name);
    auto sub = subsystem_of.find(name);
    if (sub == subsystem_of.end()) {
      // A controller deleted since the listing is simply gone.
      if (reader.Exists(cdir)) {
        raw.scan_errors.push_back(absl::UnavailableError(absl::StrCat(
            cdir, ": in no subsystem under class/nvme-subsystem")));
      }
      continue;
    }
    RawController ctrl = ReadController(name, sub->second, reader);
    absl::StatusOr<std::vector<std::string>> entries = reader.ListDir(cdir);
    // Gone while it was read: what was read of it may be half missing.
    if (!entries.ok() || !reader.Exists(cdir)) continue;
    if (subsystems_read.insert(sub->second).second) {
      raw.subsystems.push_back(ReadSubsystem(sub->second, reader));
    }
    for (const std::string& e : *entries) {
      if (!model::ParseNvmePathName(e)) continue;
      if (std::optional<RawPath> p = ReadPath(e, name, reader, raw.heads)) {
        raw.paths.push_back(*std::move(p));
      }
    }
    raw.controllers.push_back(std::move(ctrl));
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

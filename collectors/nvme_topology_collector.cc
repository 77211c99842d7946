#include "collectors/nvme_topology_collector.h"

#include <dirent.h>
#include <syslog.h>

// libnvme 1.3's headers have no extern "C" guards of their own.
extern "C" {
#include <nvme/filters.h>
#include <nvme/tree.h>
}

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include "absl/base/const_init.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "collectors/kernel_strings.h"
#include "spdlog/spdlog.h"

namespace pathwise::collectors {
namespace {

// libnvme 1.3 keeps process-global state (the current root, the default
// host), so scans are serialised. This guards the library, it is not state
// of ours.
ABSL_CONST_INIT absl::Mutex libnvme_mu(absl::kConstInit);

std::string Str(const char* s) { return s ? std::string(s) : std::string(); }

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

struct RootDeleter {
  void operator()(nvme_root* r) const { nvme_free_tree(r); }
};

}  // namespace

absl::StatusOr<std::string> HeadNameOfPath(absl::string_view path) {
  if (std::optional<model::NvmePathName> p = model::ParseNvmePathName(path)) {
    return model::HeadName(*p);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("path name \"", path, "\" is not nvme<S>c<C>n<N>"));
}

absl::StatusOr<model::DevId> ParseDevId(absl::string_view text) {
  std::pair<absl::string_view, absl::string_view> mm =
      absl::StrSplit(text, absl::MaxSplits(':', 1));
  model::DevId d;
  if (!absl::SimpleAtoi(mm.first, &d.major) ||
      !absl::SimpleAtoi(mm.second, &d.minor)) {
    return absl::InvalidArgumentError(
        absl::StrCat("not major:minor: \"", text.substr(0, 32), "\""));
  }
  return d;
}

absl::Status NvmeTopologyCollector::Collect(model::Snapshot& snapshot) {
  ErrorList errors;
  model::Topology& topo = snapshot.topology;

  auto read_str = [&](const std::string& rel) -> std::string {
    absl::StatusOr<std::string> v = reader_.ReadAttr(rel);
    if (!v.ok()) {
      errors.Add(v.status());
      return "";
    }
    return *v;
  };
  auto read_dev = [&](const std::string& rel) -> std::optional<model::DevId> {
    absl::StatusOr<std::string> v = reader_.ReadAttr(rel);
    if (!v.ok()) {
      errors.Add(v.status());
      return std::nullopt;
    }
    absl::StatusOr<model::DevId> d = ParseDevId(*v);
    if (!d.ok()) {
      errors.Add(absl::InvalidArgumentError(
          absl::StrCat(rel, ": ", d.status().message())));
      return std::nullopt;
    }
    return *d;
  };
  // A libnvme string attribute that must be present.
  auto required = [&](const char* v, const std::string& rel) -> std::string {
    if (v == nullptr) {
      errors.Add(absl::NotFoundError(
          absl::StrCat(rel, ": missing or unreadable (libnvme)")));
      return "";
    }
    return v;
  };

  absl::MutexLock lock(&libnvme_mu);
  LibnvmeLog log;
  std::unique_ptr<nvme_root, RootDeleter> root(
      nvme_create_root(log.fp(), LOG_NOTICE));
  if (!root) return absl::InternalError("nvme_create_root failed");

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
    if (nvme_scan_ctrl(root.get(), ents[i]->d_name) == nullptr &&
        // A controller deleted between listing and scanning (hotplug,
        // disconnect) is simply gone, not an error.
        reader_.Exists(absl::StrCat("class/nvme/", ents[i]->d_name))) {
      errors.Add(absl::UnavailableError(
          absl::StrCat("class/nvme/", ents[i]->d_name,
                       ": libnvme could not scan controller: ",
                       std::strerror(errno ? errno : EIO))));
    }
    free(ents[i]);
  }
  free(ents);

  // Without a host NQN (PCIe and no /etc/nvme/hostnqn) libnvme 1.3 may file
  // one kernel subsystem under several generated hosts, so subsystems are
  // merged by their kernel name.
  std::map<std::string, model::Subsystem> subsystems;
  std::map<std::string, model::Head> heads;

  nvme_host_t h;
  nvme_subsystem_t s;
  nvme_ctrl_t c;
  nvme_path_t p;
  nvme_for_each_host(root.get(), h) {
    nvme_for_each_subsystem(h, s) {
      const char* sname = nvme_subsystem_get_name(s);
      if (sname == nullptr) continue;  // no sysfs entry behind it
      const std::string sub_name = sname;
      if (!subsystems.contains(sub_name)) {
        model::Subsystem sub;
        sub.name = sub_name;
        sub.nqn = Str(nvme_subsystem_get_nqn(s));
        const std::string dir = absl::StrCat("class/nvme-subsystem/", sub_name);
        SetIopolicy(read_str(dir + "/iopolicy"), sub);
        sub.model = read_str(dir + "/model");
        sub.serial = read_str(dir + "/serial");
        subsystems.emplace(sub_name, std::move(sub));
      }

      nvme_subsystem_for_each_ctrl(s, c) {
        model::Controller ctrl;
        ctrl.name = Str(nvme_ctrl_get_name(c));
        const std::string cdir = absl::StrCat("class/nvme/", ctrl.name);
        ctrl.subsystem = sub_name;
        ctrl.transport =
            required(nvme_ctrl_get_transport(c), cdir + "/transport");
        ctrl.address = required(nvme_ctrl_get_address(c), cdir + "/address");
        ctrl.traddr = Str(nvme_ctrl_get_traddr(c));
        ctrl.trsvcid = Str(nvme_ctrl_get_trsvcid(c));
        ctrl.host_traddr = Str(nvme_ctrl_get_host_traddr(c));
        ctrl.host_iface = Str(nvme_ctrl_get_host_iface(c));
        SetControllerState(required(nvme_ctrl_get_state(c), cdir + "/state"),
                           ctrl);
        ctrl.cntlid = read_str(cdir + "/cntlid");
        if (!ctrl.cntlid.empty() && !ParseInt(ctrl.cntlid).ok()) {
          errors.Add(absl::InvalidArgumentError(absl::StrCat(
              cdir, "/cntlid: not an integer: \"", ctrl.cntlid, "\"")));
          ctrl.cntlid.clear();
        }
        if (const char* numa = nvme_ctrl_get_numa_node(c)) {
          absl::StatusOr<int64_t> v = ParseInt(numa);
          if (v.ok()) {
            ctrl.numa_node = static_cast<int>(*v);
          } else {
            errors.Add(absl::InvalidArgumentError(
                absl::StrCat(cdir, "/numa_node: ", v.status().message())));
          }
        }
        const std::string qc =
            required(nvme_ctrl_get_queue_count(c), cdir + "/queue_count");
        if (!qc.empty()) {
          absl::StatusOr<int64_t> v = ParseInt(qc);
          if (v.ok() && *v >= 0) {
            // queue_count counts the admin queue too.
            ctrl.io_queues = static_cast<uint32_t>(*v > 0 ? *v - 1 : 0);
          } else {
            errors.Add(absl::InvalidArgumentError(
                absl::StrCat(cdir, "/queue_count: not a count: \"", qc, "\"")));
          }
        }

        nvme_ctrl_for_each_path(c, p) {
          model::Path path;
          path.name = Str(nvme_path_get_name(p));
          path.subsystem = sub_name;
          path.controller = ctrl.name;
          path.numa_node = ctrl.numa_node;
          const std::string pdir = cdir + "/" + path.name;
          // For a controller without ANA (no ana_state attribute) libnvme
          // 1.3 reports "optimized", which is how the kernel treats such a
          // path (nvme_mpath_add_disk() sets NVME_ANA_OPTIMIZED).
          SetAnaState(required(nvme_path_get_ana_state(p), pdir + "/ana_state"),
                      path);
          if (!path.unknown_ana_state.empty()) {
            errors.Add(absl::InvalidArgumentError(
                absl::StrCat(pdir, "/ana_state: unknown ANA state \"",
                             path.unknown_ana_state, "\"")));
          }
          // Since 5.15 the kernel gives hidden disks no dev_t in sysfs
          // (device_add_disk() leaves ddev->devt unset for
          // GENHD_FL_HIDDEN), so a path usually has no `dev` attribute;
          // its major:minor is then unknown to userspace, which is normal
          // and not an error. Older kernels have it, and we read it.
          const std::string path_dev =
              absl::StrCat("block/", path.name, "/dev");
          if (reader_.Exists(path_dev)) path.dev = read_dev(path_dev);
          absl::StatusOr<std::string> head = HeadNameOfPath(path.name);
          if (!head.ok()) {
            errors.Add(head.status());
            continue;  // cannot place it in the tree
          }
          path.head = *head;
          if (!heads.contains(path.head)) {
            model::Head hd;
            hd.name = path.head;
            hd.subsystem = sub_name;
            const std::string hdir = absl::StrCat("block/", hd.name);
            absl::StatusOr<int64_t> nsid = reader_.ReadInt(hdir + "/nsid");
            if (nsid.ok() && *nsid > 0) {
              hd.nsid = static_cast<uint32_t>(*nsid);
            } else {
              errors.Add(nsid.ok() ? absl::InvalidArgumentError(absl::StrCat(
                                         hdir, "/nsid: not a namespace id"))
                                   : nsid.status());
            }
            hd.dev = read_dev(hdir + "/dev");
            heads.emplace(hd.name, std::move(hd));
          }
          topo.paths.push_back(std::move(path));
        }
        topo.controllers.push_back(std::move(ctrl));
      }
    }
  }
  for (auto& [name, sub] : subsystems)
    topo.subsystems.push_back(std::move(sub));
  for (auto& [name, hd] : heads) topo.heads.push_back(std::move(hd));
  topo.Sort();
  return errors.ToStatus();
}

}  // namespace pathwise::collectors

// SPDX-License-Identifier: Apache-2.0
#include "collectors/topology_builder.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "collectors/collector.h"
#include "collectors/kernel_strings.h"
#include "collectors/sysfs_reader.h"

namespace pathwise::collectors {
namespace {

// The builder's running state: the error list and the attribute helpers
// that feed it.
class Builder {
 public:
  BuiltTopology Build(const RawTopology& raw);

 private:
  std::string Str(const RawAttr& v) {
    if (!v.ok()) {
      errors_.Add(v.status());
      return "";
    }
    return *v;
  }
  std::optional<model::DevId> Dev(const RawAttr& v, const std::string& rel) {
    if (!v.ok()) {
      errors_.Add(v.status());
      return std::nullopt;
    }
    absl::StatusOr<model::DevId> d = ParseDevId(*v);
    if (!d.ok()) {
      errors_.Add(absl::InvalidArgumentError(
          absl::StrCat(rel, ": ", d.status().message())));
      return std::nullopt;
    }
    return *d;
  }
  // A decimal attribute `text` (of `rel`) in [lo, hi]; else nullopt and an
  // error: a value the model's field cannot hold, or that no kernel
  // reports, is not truncated into a plausible one.
  std::optional<int64_t> IntIn(absl::string_view text, absl::string_view rel,
                               int64_t lo, int64_t hi) {
    absl::StatusOr<int64_t> v = ParseInt(text);
    if (!v.ok()) {
      errors_.Add(absl::InvalidArgumentError(
          absl::StrCat(rel, ": ", v.status().message())));
      return std::nullopt;
    }
    if (*v < lo || *v > hi) {
      errors_.Add(absl::OutOfRangeError(absl::StrCat(
          rel, ": out of range: ", *v, " (want ", lo, "..", hi, ")")));
      return std::nullopt;
    }
    return *v;
  }
  // A diag/ counter of `dir`: nullopt when the kernel has none. Counters are
  // unsigned longs; one beyond what the model's field can hold, or negative,
  // follows the range rule (an error, the value left out).
  std::optional<uint64_t> Counter(const RawCounter& v, absl::string_view dir,
                                  absl::string_view attr) {
    if (!v) return std::nullopt;
    if (!v->ok()) {
      errors_.Add(v->status());
      return std::nullopt;
    }
    std::optional<int64_t> n = IntIn(**v, absl::StrCat(dir, "/diag/", attr), 0,
                                     std::numeric_limits<int64_t>::max());
    if (!n) return std::nullopt;
    return static_cast<uint64_t>(*n);
  }
  model::PathDiag BuildDiag(const RawPathDiag& raw, absl::string_view dir) {
    return {
        .failovers = Counter(raw.failovers, dir, "multipath_failover_count"),
        .command_retries =
            Counter(raw.command_retries, dir, raw.command_retries_attr),
        .command_errors =
            Counter(raw.command_errors, dir, "command_error_count")};
  }
  model::HeadDiag BuildDiag(const RawHeadDiag& raw, absl::string_view dir) {
    return {
        .requeued_no_usable_path = Counter(raw.requeued_no_usable_path, dir,
                                           "io_requeue_no_usable_path_count"),
        .failed_no_available_path = Counter(raw.failed_no_available_path, dir,
                                            "io_fail_no_available_path_count")};
  }
  model::ControllerDiag BuildDiag(const RawControllerDiag& raw,
                                  absl::string_view dir) {
    return {.command_errors =
                Counter(raw.command_errors, dir, "command_error_count"),
            .resets = Counter(raw.resets, dir, "reset_count"),
            .reconnects = Counter(raw.reconnects, dir, "reconnect_count")};
  }
  // A string attribute that must be present.
  std::string Required(const std::optional<std::string>& v,
                       const std::string& rel) {
    if (!v) {
      errors_.Add(
          absl::NotFoundError(absl::StrCat(rel, ": missing or unreadable")));
      return "";
    }
    return *v;
  }

  model::Subsystem BuildSubsystem(const RawSubsystem& raw);
  model::Controller BuildController(const RawController& raw);
  // Appends the path, and its head if new, to the topology, unless its name
  // cannot be placed under a head.
  void AddPath(const RawPath& raw, const model::Controller& ctrl,
               const RawTopology& topo);

  ErrorList errors_;
  model::Topology topo_;
  std::map<std::string, model::Subsystem> subsystems_;
  std::map<std::string, model::Head> heads_;
};

model::Subsystem Builder::BuildSubsystem(const RawSubsystem& raw) {
  model::Subsystem sub;
  sub.name = raw.name;
  sub.nqn = raw.nqn;
  SetIopolicy(Str(raw.iopolicy), sub);
  sub.model = Str(raw.model);
  sub.serial = Str(raw.serial);
  return sub;
}

model::Controller Builder::BuildController(const RawController& raw) {
  model::Controller ctrl;
  ctrl.name = raw.name;
  const std::string cdir = absl::StrCat("class/nvme/", ctrl.name);
  ctrl.subsystem = raw.subsystem;
  ctrl.transport = Required(raw.transport, cdir + "/transport");
  ctrl.address = Required(raw.address, cdir + "/address");
  ctrl.traddr = raw.traddr;
  ctrl.trsvcid = raw.trsvcid;
  ctrl.host_traddr = raw.host_traddr;
  ctrl.host_iface = raw.host_iface;
  SetControllerState(Required(raw.state, cdir + "/state"), ctrl);
  if (!ctrl.unknown_state.empty()) {
    // The same rule as an unknown ANA state: an error, the StateSet all 0.
    errors_.Add(absl::InvalidArgumentError(
        absl::StrCat(cdir, "/state: unknown controller state \"",
                     ctrl.unknown_state, "\"")));
  }
  ctrl.cntlid = Str(raw.cntlid);
  // CNTLID is 16 bits in Identify Controller.
  if (!ctrl.cntlid.empty() &&
      !IntIn(ctrl.cntlid, cdir + "/cntlid", 0, 0xFFFF)) {
    ctrl.cntlid.clear();
  }
  if (raw.numa_node) {
    // -1 is NUMA_NO_NODE; MAX_NUMNODES is at most 1024 on every
    // architecture (CONFIG_NODES_SHIFT <= 10).
    if (std::optional<int64_t> v =
            IntIn(*raw.numa_node, cdir + "/numa_node", -1, 1023)) {
      ctrl.numa_node = static_cast<int>(*v);
    }
  }
  const std::string qc = Required(raw.queue_count, cdir + "/queue_count");
  if (!qc.empty()) {
    // The admin queue plus at most 65535 I/O queues (Number of Queues is
    // 16 bits, 0's based); 0 before the queues are set up.
    if (std::optional<int64_t> v = IntIn(qc, cdir + "/queue_count", 0, 65536)) {
      // queue_count counts the admin queue too.
      ctrl.io_queues = static_cast<uint32_t>(*v > 0 ? *v - 1 : 0);
    }
  }
  ctrl.diag = BuildDiag(raw.diag, cdir);
  return ctrl;
}

void Builder::AddPath(const RawPath& raw, const model::Controller& ctrl,
                      const RawTopology& topo) {
  model::Path path;
  path.name = raw.name;
  path.subsystem = ctrl.subsystem;
  path.controller = ctrl.name;
  path.numa_node = ctrl.numa_node;
  const std::string pdir =
      absl::StrCat("class/nvme/", ctrl.name, "/", path.name);
  // For a controller without ANA (no ana_state attribute) the scan reports
  // "optimized", which is how the kernel treats such a path
  // (nvme_mpath_add_disk() sets NVME_ANA_OPTIMIZED).
  SetAnaState(Required(raw.ana_state, pdir + "/ana_state"), path);
  if (!path.unknown_ana_state.empty()) {
    errors_.Add(absl::InvalidArgumentError(
        absl::StrCat(pdir, "/ana_state: unknown ANA state \"",
                     path.unknown_ana_state, "\"")));
  }
  if (raw.dev) {
    path.dev = Dev(*raw.dev, absl::StrCat("block/", path.name, "/dev"));
  }
  path.diag = BuildDiag(raw.diag, absl::StrCat("block/", path.name));
  absl::StatusOr<std::string> head = HeadNameOfPath(path.name);
  if (!head.ok()) {
    errors_.Add(head.status());
    return;  // cannot place it in the tree
  }
  path.head = *head;
  if (!heads_.contains(path.head)) {
    model::Head hd;
    hd.name = path.head;
    hd.subsystem = ctrl.subsystem;
    const std::string hdir = absl::StrCat("block/", hd.name);
    auto it = topo.heads.find(hd.name);
    if (it == topo.heads.end()) {
      errors_.Add(absl::NotFoundError(absl::StrCat(hdir, ": not scanned")));
    } else {
      const RawAttr& nsid_text = it->second.nsid;
      // A namespace id: 0 and 0xFFFFFFFF (all namespaces) name none.
      if (!nsid_text.ok()) {
        errors_.Add(nsid_text.status());
      } else if (std::optional<int64_t> nsid =
                     IntIn(*nsid_text, hdir + "/nsid", 1, 0xFFFFFFFE)) {
        hd.nsid = static_cast<uint32_t>(*nsid);
      }
      hd.dev = Dev(it->second.dev, hdir + "/dev");
      hd.diag = BuildDiag(it->second.diag, hdir);
    }
    heads_.emplace(hd.name, std::move(hd));
  }
  topo_.paths.push_back(std::move(path));
}

BuiltTopology Builder::Build(const RawTopology& raw) {
  for (const absl::Status& s : raw.scan_errors) errors_.Add(s);
  // Subsystems, controllers and paths are built in scan order, so the
  // first error reported is the first one a reader of sysfs would meet.
  size_t next_sub = 0;
  // Builds the subsystems in scan order up to `name` (all if nullopt).
  auto add_subsystems_up_to = [&](std::optional<absl::string_view> name) {
    while (next_sub < raw.subsystems.size()) {
      const RawSubsystem& s = raw.subsystems[next_sub++];
      if (!subsystems_.contains(s.name)) {
        subsystems_.emplace(s.name, BuildSubsystem(s));
      }
      if (name && s.name == *name) return;
    }
  };
  std::multimap<std::string, const RawPath*> paths_by_ctrl;
  for (const RawPath& p : raw.paths) paths_by_ctrl.emplace(p.controller, &p);
  for (const RawController& rc : raw.controllers) {
    if (!subsystems_.contains(rc.subsystem)) add_subsystems_up_to(rc.subsystem);
    model::Controller ctrl = BuildController(rc);
    auto [first, last] = paths_by_ctrl.equal_range(rc.name);
    for (auto it = first; it != last; ++it) AddPath(*it->second, ctrl, raw);
    topo_.controllers.push_back(std::move(ctrl));
  }
  add_subsystems_up_to(std::nullopt);  // those without controllers
  for (auto& [name, sub] : subsystems_) {
    topo_.subsystems.push_back(std::move(sub));
  }
  for (auto& [name, hd] : heads_) topo_.heads.push_back(std::move(hd));
  topo_.Sort();
  return {std::move(topo_), errors_.ToStatus()};
}

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

BuiltTopology BuildTopology(const RawTopology& raw) {
  return Builder().Build(raw);
}

}  // namespace pathwise::collectors

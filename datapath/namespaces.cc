// SPDX-License-Identifier: Apache-2.0
#include "datapath/namespaces.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <system_error>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "model/types.h"

namespace pathwise::datapath {
namespace {

namespace fs = std::filesystem;

std::string ReadAttr(const fs::path& p) {
  std::ifstream in(p);
  if (!in) return "";
  std::string s((std::istreambuf_iterator<char>(in)),
                std::istreambuf_iterator<char>());
  return std::string(absl::StripAsciiWhitespace(s));
}

template <typename T>
T ReadNumber(const fs::path& p, T fallback) {
  T v{};
  return absl::SimpleAtoi(ReadAttr(p), &v) ? v : fallback;
}

// nvme<X>n<Y> of controller nvme<X>: the per-controller node (multipath
// off), not nvme<S>c<X>n<Y> (a path of a head) nor a partition.
bool IsControllerNamespace(const std::string& controller,
                           const std::string& name) {
  const std::string prefix = controller + "n";
  if (!absl::StartsWith(name, prefix) || name.size() == prefix.size()) {
    return false;
  }
  return std::all_of(name.begin() + prefix.size(), name.end(),
                     [](char c) { return absl::ascii_isdigit(c); });
}

bool Lacks(const std::string& value) {
  return value.empty() || std::all_of(value.begin(), value.end(), [](char c) {
           return c == '0' || c == '-' || c == ' ';
         });
}

std::string Describe(const NamespaceGroup& g) {
  std::vector<std::string> names;
  for (const NamespacePath& p : g.paths) names.push_back(p.name);
  return absl::StrCat(g.id, " (", absl::StrJoin(names, ", "), ")");
}

}  // namespace

std::string NamespaceIdentity(const NamespacePath& p) {
  if (!Lacks(p.nguid)) return absl::StrCat("nguid.", p.nguid);
  if (!Lacks(p.eui)) return absl::StrCat("eui.", p.eui);
  if (!Lacks(p.uuid)) return absl::StrCat("uuid.", p.uuid);
  return p.wwid;
}

std::vector<NamespaceGroup> GroupNamespaces(std::vector<NamespacePath> paths) {
  std::sort(paths.begin(), paths.end(),
            [](const NamespacePath& a, const NamespacePath& b) {
              return std::tie(a.controller_instance, a.nsid, a.name) <
                     std::tie(b.controller_instance, b.nsid, b.name);
            });
  std::vector<NamespaceGroup> groups;
  std::map<std::pair<std::string, std::string>, size_t> index;
  for (NamespacePath& p : paths) {
    std::string id = NamespaceIdentity(p);
    if (id.empty()) continue;
    auto [it, added] = index.try_emplace({p.subsysnqn, id}, groups.size());
    if (added) {
      groups.push_back(NamespaceGroup{.id = id, .subsysnqn = p.subsysnqn});
    }
    groups[it->second].paths.push_back(std::move(p));
  }
  return groups;
}

absl::StatusOr<NamespaceGroup> ResolveNamespace(
    const std::vector<NamespaceGroup>& groups, const std::string& spec) {
  const NamespaceGroup* found = nullptr;
  if (spec == "auto") {
    std::vector<const NamespaceGroup*> multi;
    for (const NamespaceGroup& g : groups) {
      if (g.paths.size() > 1) multi.push_back(&g);
    }
    if (multi.empty()) {
      if (groups.empty()) {
        return absl::NotFoundError(
            "no NVMe namespace found (no nvmeXnY under /sys/class/nvme)");
      }
      return absl::FailedPreconditionError(absl::StrCat(
          "no namespace has more than one path: ", Describe(groups.front()),
          " has one; the datapath needs two or more"));
    }
    if (multi.size() > 1) {
      std::vector<std::string> ids;
      for (const NamespaceGroup* g : multi) ids.push_back(g->id);
      return absl::InvalidArgumentError(
          absl::StrCat("--namespace auto: several namespaces have more than "
                       "one path; pick one of ",
                       absl::StrJoin(ids, ", ")));
    }
    found = multi.front();
  } else {
    for (const NamespaceGroup& g : groups) {
      const size_t dot = g.id.find('.');
      bool match = g.id == spec ||
                   (dot != std::string::npos && g.id.substr(dot + 1) == spec);
      for (const NamespacePath& p : g.paths) {
        match = match || p.name == spec || p.generic == spec ||
                absl::StrCat("/dev/", p.name) == spec ||
                absl::StrCat("/dev/", p.generic) == spec;
      }
      if (match) {
        found = &g;
        break;
      }
    }
    if (found == nullptr) {
      return absl::NotFoundError(
          absl::StrCat("no such namespace: ", spec,
                       " (want auto, an identity such as uuid.<uuid>, or "
                       "a per-controller name such as nvme0n1)"));
    }
  }
  if (found->paths.size() < 2) {
    return absl::FailedPreconditionError(
        absl::StrCat("namespace ", Describe(*found),
                     " has one path; the datapath needs two or more"));
  }
  return *found;
}

absl::StatusOr<std::vector<NamespacePath>> ReadNamespacePaths(
    const std::string& sysfs_root) {
  std::vector<NamespacePath> out;
  const fs::path class_dir = fs::path(sysfs_root) / "class/nvme";
  std::error_code ec;
  fs::directory_iterator ctrls(class_dir, ec);
  if (ec) return out;  // no NVMe controller at all
  for (const fs::directory_entry& c : ctrls) {
    const std::string controller = c.path().filename();
    const fs::path cdir = c.path();
    std::error_code ec2;
    for (const fs::directory_entry& n : fs::directory_iterator(cdir, ec2)) {
      const std::string name = n.path().filename();
      if (!IsControllerNamespace(controller, name)) continue;
      const fs::path ns = n.path();
      NamespacePath p;
      p.name = name;
      p.generic = "ng" + name.substr(4);
      p.controller = controller;
      p.controller_instance = model::ControllerInstance(controller);
      p.numa_node = ReadNumber<int>(cdir / "numa_node", -1);
      p.controller_state = ReadAttr(cdir / "state");
      p.subsysnqn = ReadAttr(cdir / "subsysnqn");
      p.wwid = ReadAttr(ns / "wwid");
      p.nguid = ReadAttr(ns / "nguid");
      p.eui = ReadAttr(ns / "eui");
      p.uuid = ReadAttr(ns / "uuid");
      p.nsid = ReadNumber<uint32_t>(ns / "nsid", 0);
      p.size_sectors = ReadNumber<uint64_t>(ns / "size", 0);
      p.logical_block_size =
          ReadNumber<uint32_t>(ns / "queue/logical_block_size", 512);
      p.physical_block_size =
          ReadNumber<uint32_t>(ns / "queue/physical_block_size", 512);
      p.max_hw_sectors_kb =
          ReadNumber<uint32_t>(ns / "queue/max_hw_sectors_kb", 0);
      p.max_segments = ReadNumber<uint32_t>(ns / "queue/max_segments", 0);
      p.discard_max_hw_bytes =
          ReadNumber<uint64_t>(ns / "queue/discard_max_hw_bytes", 0);
      p.write_zeroes_max_bytes =
          ReadNumber<uint64_t>(ns / "queue/write_zeroes_max_bytes", 0);
      p.volatile_cache = ReadAttr(ns / "queue/write_cache") == "write back";
      p.fua = ReadAttr(ns / "queue/fua") == "1";
      out.push_back(std::move(p));
    }
  }
  return out;
}

bool NativeMultipathOn(const std::string& sysfs_root) {
  return ReadAttr(fs::path(sysfs_root) /
                  "module/nvme_core/parameters/multipath") == "Y";
}

}  // namespace pathwise::datapath

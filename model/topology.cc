// SPDX-License-Identifier: Apache-2.0
#include "model/topology.h"

#include <string.h>

#include <algorithm>
#include <set>
#include <string>
#include <tuple>

#include "absl/strings/str_cat.h"

namespace pathwise::model {

void OpStats::Merge(const OpStats& o) {
  completed += o.completed;
  bytes += o.bytes;
  time_ns += o.time_ns;
  if (o.errors) errors = errors.value_or(0) + *o.errors;
  if (o.latency) {
    if (!latency) latency.emplace();
    latency->Merge(*o.latency);
  }
}

bool NaturalLess(absl::string_view a, absl::string_view b) {
  // strverscmp needs NUL-terminated strings; kernel names are short.
  const std::string sa(a), sb(b);
  return strverscmp(sa.c_str(), sb.c_str()) < 0;
}

namespace {

template <typename T>
const T* FindByName(const std::vector<T>& v, absl::string_view name) {
  for (const T& x : v) {
    if (x.name == name) return &x;
  }
  return nullptr;
}

template <typename T>
void SortByName(std::vector<T>& v) {
  std::sort(v.begin(), v.end(),
            [](const T& a, const T& b) { return NaturalLess(a.name, b.name); });
}

using StructureKey = std::set<
    std::tuple<char, std::string, std::string, std::string, std::string>>;

StructureKey KeyOf(const Topology& t) {
  StructureKey k;
  for (const auto& s : t.subsystems) k.emplace('s', s.name, s.nqn, "", "");
  for (const auto& h : t.heads) k.emplace('h', h.name, h.subsystem, "", "");
  for (const auto& p : t.paths)
    k.emplace('p', p.name, p.subsystem, p.head, p.controller);
  for (const auto& c : t.controllers)
    k.emplace('c', c.name, c.subsystem, c.transport, c.address);
  return k;
}

}  // namespace

const Path* Topology::FindPath(absl::string_view name) const {
  return FindByName(paths, name);
}
const Controller* Topology::FindController(absl::string_view name) const {
  return FindByName(controllers, name);
}

void Topology::Sort() {
  SortByName(subsystems);
  SortByName(heads);
  SortByName(paths);
  SortByName(controllers);
}

MultipathPresence Presence(const Topology& t) {
  MultipathPresence p;
  p.subsystems = static_cast<int>(t.subsystems.size());
  std::set<std::string_view> with_heads;
  for (const Head& h : t.heads) with_heads.insert(h.subsystem);
  for (const Subsystem& s : t.subsystems) {
    if (with_heads.contains(s.name)) ++p.multipath_subsystems;
  }
  // Heads whose subsystem was not listed still mean multipath is on.
  if (p.multipath_subsystems > 0 || !t.heads.empty()) return p;
  std::string found;
  if (!t.subsystem_class) {
    found = "no /sys/class/nvme-subsystem: nvme_core is not loaded";
  } else if (t.subsystems.empty()) {
    found = "/sys/class/nvme-subsystem is empty: no NVMe device";
  } else {
    found = absl::StrCat(t.subsystems.size(), " NVMe subsystem",
                         t.subsystems.size() == 1 ? "" : "s",
                         ", none with a multipath head");
  }
  p.notice = absl::StrCat(
      "no NVMe multipath subsystems: is nvme_core loaded with multipath=Y? (",
      found, ")");
  return p;
}

bool StructureDiffers(const Topology& a, const Topology& b) {
  return KeyOf(a) != KeyOf(b);
}

bool Snapshot::AllCollectorsSucceeded() const {
  return std::all_of(collectors.begin(), collectors.end(),
                     [](const CollectorResult& r) { return r.success; });
}

}  // namespace pathwise::model

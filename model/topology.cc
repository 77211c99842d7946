#include "model/topology.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"

namespace pathwise::model {

std::string NormalizeControllerState(absl::string_view kernel_state) {
  // The kernel reports NVME_CTRL_DELETING_NOIO as "deleting (no IO)".
  if (kernel_state.rfind("deleting", 0) == 0) return "deleting";
  return std::string(kernel_state);
}

uint64_t Histogram::Count() const {
  uint64_t n = 0;
  for (uint64_t c : counts) n += c;
  return n;
}

std::vector<uint64_t> Histogram::Cumulative() const {
  std::vector<uint64_t> out(counts.size());
  uint64_t run = 0;
  for (size_t i = 0; i < counts.size(); ++i) out[i] = run += counts[i];
  return out;
}

bool operator==(const Histogram& a, const Histogram& b) {
  const bool same_bounds =
      a.upper_bounds == b.upper_bounds ||
      (a.upper_bounds && b.upper_bounds && *a.upper_bounds == *b.upper_bounds);
  return same_bounds && a.counts == b.counts && a.sum_seconds == b.sum_seconds;
}

std::string ToString(const DevId& dev) {
  return absl::StrCat(dev.major, ":", dev.minor);
}

bool NaturalLess(absl::string_view a, absl::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = std::isdigit(static_cast<unsigned char>(a[i]));
    const bool db = std::isdigit(static_cast<unsigned char>(b[j]));
    if (da && db) {
      size_t ie = i, je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie])))
        ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je])))
        ++je;
      // Compare numerically: strip leading zeros, then by length, then text.
      absl::string_view na = a.substr(i, ie - i), nb = b.substr(j, je - j);
      while (na.size() > 1 && na[0] == '0') na.remove_prefix(1);
      while (nb.size() > 1 && nb[0] == '0') nb.remove_prefix(1);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ie;
      j = je;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  if ((a.size() - i) != (b.size() - j)) return (a.size() - i) < (b.size() - j);
  return a < b;  // total order for equal-by-number names ("01" vs "1")
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

const Subsystem* Topology::FindSubsystem(absl::string_view name) const {
  return FindByName(subsystems, name);
}
const Head* Topology::FindHead(absl::string_view name) const {
  return FindByName(heads, name);
}
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

bool StructureDiffers(const Topology& a, const Topology& b) {
  return KeyOf(a) != KeyOf(b);
}

bool Snapshot::AllCollectorsSucceeded() const {
  return std::all_of(collectors.begin(), collectors.end(),
                     [](const CollectorResult& r) { return r.success; });
}

}  // namespace pathwise::model

// SPDX-License-Identifier: Apache-2.0
// Sorting and filtering of a frame's tables (ui/frame.h).
#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/match.h"
#include "ui/frame.h"

namespace pathwise::ui {
namespace {

constexpr std::array<std::pair<SortKey, absl::string_view>, 8> kSortNames = {{
    {SortKey::kName, "name"},
    {SortKey::kHealth, "health"},
    {SortKey::kReadIops, "riops"},
    {SortKey::kWriteIops, "wiops"},
    {SortKey::kReadP99, "rp99"},
    {SortKey::kWriteP99, "wp99"},
    {SortKey::kEwma, "ewma"},
    {SortKey::kErrors, "errors"},
}};

// Worst first: failed, degraded, idle, healthy, unscored.
int HealthRank(const std::optional<model::PathHealth>& h) {
  if (!h) return 4;
  switch (*h) {
    case model::PathHealth::kFailed:
      return 0;
    case model::PathHealth::kDegraded:
      return 1;
    case model::PathHealth::kIdle:
      return 2;
    case model::PathHealth::kHealthy:
      return 3;
  }
  return 4;
}

// Descending, unknown last.
double Desc(const std::optional<double>& v) {
  return v ? -*v : std::numeric_limits<double>::infinity();
}

bool NameLess(const PathRow& a, const PathRow& b) {
  if (a.subsystem != b.subsystem)
    return model::NaturalLess(a.subsystem, b.subsystem);
  if (a.head != b.head) return model::NaturalLess(a.head, b.head);
  return model::NaturalLess(a.path, b.path);
}

double SortValue(const PathRow& r, SortKey key) {
  switch (key) {
    case SortKey::kName:
      return 0;
    case SortKey::kHealth:
      return HealthRank(r.health);
    case SortKey::kReadIops:
      return -r.read.iops;
    case SortKey::kWriteIops:
      return -r.write.iops;
    case SortKey::kReadP99:
      return Desc(r.read.p99 ? r.read.p99 : r.read.mean);
    case SortKey::kWriteP99:
      return Desc(r.write.p99 ? r.write.p99 : r.write.mean);
    case SortKey::kEwma:
      return Desc(r.ewma_read);
    case SortKey::kErrors:
      return r.errors ? -static_cast<double>(r.errors->interval) : 0;
  }
  return 0;
}

double ControllerSortValue(const ControllerRow& r, SortKey key) {
  switch (key) {
    case SortKey::kReadIops:
      return -r.read_iops;
    case SortKey::kWriteIops:
      return -r.write_iops;
    case SortKey::kReadP99:
    case SortKey::kWriteP99:
    case SortKey::kEwma:
      return Desc(r.probe_p99);
    case SortKey::kHealth:
      return r.unreachable ? 0 : 1;
    case SortKey::kErrors:
      return r.errors ? -static_cast<double>(r.errors->interval) : 0;
    case SortKey::kName:
      return 0;
  }
  return 0;
}

bool Contains(absl::string_view haystack, absl::string_view needle) {
  return absl::StrContains(haystack, needle);
}

}  // namespace

absl::string_view SortKeyName(SortKey k) {
  for (const auto& [key, name] : kSortNames) {
    if (key == k) return name;
  }
  return "name";
}

std::optional<SortKey> ParseSortKey(absl::string_view name) {
  for (const auto& [key, n] : kSortNames) {
    if (n == name) return key;
  }
  return std::nullopt;
}

void SortFrame(Frame& frame, SortKey key) {
  std::stable_sort(frame.paths.begin(), frame.paths.end(),
                   [key](const PathRow& a, const PathRow& b) {
                     const double va = SortValue(a, key),
                                  vb = SortValue(b, key);
                     if (va != vb) return va < vb;
                     return NameLess(a, b);
                   });
  std::stable_sort(frame.controllers.begin(), frame.controllers.end(),
                   [key](const ControllerRow& a, const ControllerRow& b) {
                     const double va = ControllerSortValue(a, key),
                                  vb = ControllerSortValue(b, key);
                     if (va != vb) return va < vb;
                     if (a.subsystem != b.subsystem) {
                       return model::NaturalLess(a.subsystem, b.subsystem);
                     }
                     return model::NaturalLess(a.controller, b.controller);
                   });
  std::stable_sort(frame.heads.begin(), frame.heads.end(),
                   [](const HeadRow& a, const HeadRow& b) {
                     if (a.subsystem != b.subsystem) {
                       return model::NaturalLess(a.subsystem, b.subsystem);
                     }
                     return model::NaturalLess(a.head, b.head);
                   });
  std::stable_sort(frame.devices.begin(), frame.devices.end(),
                   [key](const DeviceRow& a, const DeviceRow& b) {
                     double va = 0, vb = 0;
                     if (key == SortKey::kReadIops)
                       va = -a.read.iops, vb = -b.read.iops;
                     if (key == SortKey::kWriteIops)
                       va = -a.write.iops, vb = -b.write.iops;
                     if (key == SortKey::kReadP99)
                       va = Desc(a.read.p99), vb = Desc(b.read.p99);
                     if (key == SortKey::kWriteP99)
                       va = Desc(a.write.p99), vb = Desc(b.write.p99);
                     if (va != vb) return va < vb;
                     return model::NaturalLess(a.device, b.device);
                   });
}

void FilterFrame(Frame& frame, absl::string_view filter) {
  if (filter.empty()) return;
  std::erase_if(frame.paths, [filter](const PathRow& r) {
    return !Contains(r.path, filter) && !Contains(r.head, filter) &&
           !Contains(r.controller, filter) && !Contains(r.subsystem, filter) &&
           !Contains(r.address, filter);
  });
  std::erase_if(frame.controllers, [filter](const ControllerRow& r) {
    return !Contains(r.controller, filter) && !Contains(r.subsystem, filter) &&
           !Contains(r.address, filter);
  });
  std::erase_if(frame.devices, [filter](const DeviceRow& r) {
    return !Contains(r.device, filter);
  });
  std::erase_if(frame.heads, [&frame](const HeadRow& h) {
    return std::none_of(frame.paths.begin(), frame.paths.end(),
                        [&h](const PathRow& p) { return p.head == h.head; });
  });
  std::erase_if(frame.subsystems, [&frame](const SubsystemLine& s) {
    return std::none_of(
               frame.paths.begin(), frame.paths.end(),
               [&s](const PathRow& p) { return p.subsystem == s.subsystem; }) &&
           std::none_of(frame.controllers.begin(), frame.controllers.end(),
                        [&s](const ControllerRow& c) {
                          return c.subsystem == s.subsystem;
                        });
  });
}

}  // namespace pathwise::ui

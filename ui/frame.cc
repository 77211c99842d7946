// SPDX-License-Identifier: Apache-2.0
#include "ui/frame.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "exporters/labels.h"
#include "model/delta.h"

namespace pathwise::ui {
namespace {

using IoMap = std::map<std::string, model::IoStats, std::less<>>;

std::optional<double> Finite(double v) {
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

OpWindow WindowOf(const model::IoRates* rates, model::Op op) {
  OpWindow w;
  if (rates == nullptr || !rates->op(op)) return w;
  const model::OpRates& r = *rates->op(op);
  w.iops = r.iops;
  w.mib_per_second = r.bytes_per_second / (1024.0 * 1024.0);
  w.mean = r.mean_latency_seconds;
  if (r.completed > 0) {
    w.p50 = Finite(r.LatencyQuantile(0.5));
    w.p99 = Finite(r.LatencyQuantile(0.99));
  }
  return w;
}

const model::IoRates* Find(
    const std::map<std::string, model::IoRates, std::less<>>* m,
    absl::string_view name) {
  if (m == nullptr) return nullptr;
  auto it = m->find(name);
  return it == m->end() ? nullptr : &it->second;
}

// A counter's total now and its growth since `earlier` (nullopt there: no
// interval). A counter that went backwards (reset) counts from zero.
Count CountOf(uint64_t now, std::optional<uint64_t> earlier) {
  return {now, earlier ? (now >= *earlier ? now - *earlier : now) : 0};
}

std::string Address(const model::Controller& c) {
  if (!c.traddr.empty()) {
    return c.trsvcid.empty() ? c.traddr
                             : absl::StrCat(c.traddr, ":", c.trsvcid);
  }
  return c.address;
}

template <typename T, typename Map>
const T* FindIn(const Map& m, absl::string_view name) {
  auto it = m.find(name);
  return it == m.end() ? nullptr : &it->second;
}

// The failovers of a path: the kernel's diag counter, else the sampler's.
std::optional<uint64_t> Failovers(const model::Snapshot& s,
                                  const model::Path& p) {
  if (p.diag.failovers) return p.diag.failovers;
  if (const auto* n = FindIn<model::PathNvmeStats>(s.path_nvme, p.name)) {
    return n->failovers;
  }
  return std::nullopt;
}

// NVMe error completions of a path: the sampler's by class, summed, else
// the kernel's command_error_count.
std::optional<uint64_t> Errors(const model::Snapshot& s, const model::Path& p) {
  if (const auto* n = FindIn<model::PathNvmeStats>(s.path_nvme, p.name);
      n != nullptr && n->errors_by_class) {
    uint64_t sum = 0;
    for (uint64_t v : *n->errors_by_class) sum += v;
    return sum;
  }
  return p.diag.command_errors;
}

std::optional<Count> CounterRow(std::optional<uint64_t> now,
                                std::optional<uint64_t> earlier,
                                bool has_interval) {
  if (!now) return std::nullopt;
  return CountOf(*now, has_interval
                           ? std::optional<uint64_t>(earlier.value_or(0))
                           : std::nullopt);
}

PathRow MakePathRow(const model::Snapshot& now, const model::Snapshot* earlier,
                    const model::SnapshotRates* rates, const model::Path& p) {
  PathRow r;
  r.subsystem = p.subsystem;
  r.head = p.head;
  r.path = p.name;
  r.controller = p.controller;
  if (const model::Controller* c = now.topology.FindController(p.controller)) {
    r.transport = c->transport;
    r.address = Address(*c);
    r.controller_state = std::string(exporters::ControllerStateText(*c));
  }
  r.ana_state = std::string(exporters::AnaStateText(p));
  const model::IoRates* pr = Find(rates ? &rates->paths : nullptr, p.name);
  r.read = WindowOf(pr, model::Op::kRead);
  r.write = WindowOf(pr, model::Op::kWrite);
  if (const auto* io = FindIn<model::IoStats>(now.path_io, p.name)) {
    r.inflight = io->inflight;
  }
  if (now.scoring) {
    if (const auto* ps =
            FindIn<model::PathScoring>(now.scoring->paths, p.name)) {
      r.health = ps->health;
      r.ewma_read =
          ps->latency_ewma_seconds[model::Index(model::OpGroup::kRead)];
      r.ewma_write =
          ps->latency_ewma_seconds[model::Index(model::OpGroup::kWrite)];
      r.weight_read = ps->weight[model::Index(model::OpGroup::kRead)];
      r.weight_write = ps->weight[model::Index(model::OpGroup::kWrite)];
    }
  }
  const model::Path* before =
      earlier != nullptr ? earlier->topology.FindPath(p.name) : nullptr;
  const bool interval = rates != nullptr;
  r.failovers = CounterRow(Failovers(now, p),
                           before ? Failovers(*earlier, *before) : std::nullopt,
                           interval);
  r.errors =
      CounterRow(Errors(now, p),
                 before ? Errors(*earlier, *before) : std::nullopt, interval);
  return r;
}

ControllerRow MakeControllerRow(const model::Snapshot& now,
                                const model::Snapshot* earlier, bool interval,
                                const model::Controller& c) {
  ControllerRow r;
  r.subsystem = c.subsystem;
  r.controller = c.name;
  r.transport = c.transport;
  r.address = Address(c);
  r.state = std::string(exporters::ControllerStateText(c));
  const model::Controller* before =
      earlier != nullptr ? earlier->topology.FindController(c.name) : nullptr;
  const model::ControllerDiag none;
  const model::ControllerDiag& bd = before ? before->diag : none;
  r.resets = CounterRow(c.diag.resets, bd.resets, interval);
  r.reconnects = CounterRow(c.diag.reconnects, bd.reconnects, interval);
  r.errors = CounterRow(c.diag.command_errors, bd.command_errors, interval);
  if (const auto* probe =
          FindIn<model::ControllerProbeStats>(now.controller_probe, c.name)) {
    const model::ControllerProbeStats* prev =
        earlier ? FindIn<model::ControllerProbeStats>(earlier->controller_probe,
                                                      c.name)
                : nullptr;
    const model::LatencyHistogram window =
        prev ? probe->latency.Delta(prev->latency) : probe->latency;
    if (interval && window.Count() > 0) {
      r.probe_p50 = Finite(window.Quantile(0.5));
      r.probe_p99 = Finite(window.Quantile(0.99));
    }
    uint64_t failed = 0, failed_before = 0;
    for (size_t i = 0; i < model::kProbeFailureCount; ++i) {
      failed += probe->failures[i];
      if (prev) failed_before += prev->failures[i];
    }
    r.probe_failures = CounterRow(failed, failed_before, interval);
    r.unreachable = probe->unreachable;
  }
  return r;
}

std::string DecisionLine(const model::IopolicyDecision& d) {
  std::string out = absl::StrCat(exporters::DecisionResultLabel(d.result), " ",
                                 exporters::IopolicyLabel(d.from), " -> ",
                                 exporters::IopolicyLabel(d.to));
  if (d.at != absl::InfinitePast()) {
    absl::StrAppend(&out, " at ",
                    absl::FormatTime("%H:%M:%SZ", d.at, absl::UTCTimeZone()));
  }
  if (d.restore) absl::StrAppend(&out, " (restore)");
  if (!d.reason.empty()) absl::StrAppend(&out, ": ", d.reason);
  if (!d.error.empty()) absl::StrAppend(&out, " [", d.error, "]");
  return out;
}

const model::DatapathPathReport* DatapathPath(
    const std::optional<model::DatapathReport>& r, absl::string_view path) {
  if (!r) return nullptr;
  for (const model::DatapathPathReport& p : r->paths) {
    if (p.path == path) return &p;
  }
  return nullptr;
}

// The datapath's decisions over the interval: its line, and per path its
// state, choices and their share.
void AddDatapath(const model::Snapshot& now, const model::Snapshot* before,
                 Frame& f) {
  const model::DatapathReport& d = *now.datapath;
  const bool interval = before != nullptr;
  const std::optional<model::DatapathReport> none;
  const std::optional<model::DatapathReport>& prev =
      before != nullptr ? before->datapath : none;
  auto count = [&](uint64_t v, uint64_t model::DatapathReport::*field) {
    return CountOf(v, interval
                          ? std::optional<uint64_t>(prev ? (*prev).*field : 0)
                          : std::nullopt);
  };
  DatapathLine line;
  line.device = d.device;
  line.policy = d.policy;
  line.paths = static_cast<int>(d.paths.size());
  line.requests = count(d.requests, &model::DatapathReport::requests);
  line.failed_requests =
      count(d.failed_requests, &model::DatapathReport::failed_requests);
  line.no_path_waits =
      count(d.no_path_waits, &model::DatapathReport::no_path_waits);
  line.no_path_timeouts =
      count(d.no_path_timeouts, &model::DatapathReport::no_path_timeouts);
  uint64_t chosen = 0;
  for (const model::DatapathPathReport& p : d.paths) {
    line.usable += p.state == model::DatapathPathState::kUsable;
    PathRow* row = nullptr;
    for (PathRow& r : f.paths) {
      if (r.path == p.path) row = &r;
    }
    if (row == nullptr) continue;
    row->datapath_state =
        absl::StrCat(exporters::DatapathPathStateLabel(p.state),
                     p.probing ? " probing" : "");
    const model::DatapathPathReport* b = DatapathPath(prev, p.path);
    row->selections = CountOf(
        p.selections, interval ? std::optional<uint64_t>(b ? b->selections : 0)
                               : std::nullopt);
    row->inflight = p.inflight;
    chosen += row->selections->interval;
  }
  if (interval && chosen > 0) {
    for (PathRow& r : f.paths) {
      if (r.selections) {
        r.selection_share = static_cast<double>(r.selections->interval) /
                            static_cast<double>(chosen);
      }
    }
  }
  f.datapath = std::move(line);
}

}  // namespace

Frame BuildFrame(const model::Snapshot* earlier, const model::Snapshot& now) {
  Frame f;
  f.generation = now.generation;
  f.collected_at = now.collected_at;
  f.io_source = now.io_source;
  for (const model::CollectorResult& c : now.collectors) {
    if (!c.success) {
      f.failed_collectors.push_back(
          absl::StrCat("collector ", c.name, ": ", c.error));
    }
  }
  if (!now.datapath) f.notice = model::Presence(now.topology).notice;
  std::optional<model::SnapshotRates> rates;
  if (earlier != nullptr) rates = model::RatesBetween(*earlier, now);
  if (rates) f.interval_seconds = rates->seconds;
  const model::SnapshotRates* r = rates ? &*rates : nullptr;
  // Counters are compared with `earlier` only over a real interval.
  const model::Snapshot* before = r ? earlier : nullptr;

  const model::Topology& t = now.topology;
  for (const model::Subsystem& s : t.subsystems) {
    SubsystemLine line;
    line.subsystem = s.name;
    line.nqn = s.nqn;
    line.iopolicy = std::string(exporters::IopolicyText(s));
    if (now.scoring) {
      if (const auto* rec = FindIn<model::IopolicyRecommendation>(
              now.scoring->iopolicy_recommended, s.name)) {
        line.recommended =
            std::string(exporters::RecommendedIopolicyText(*rec, s));
        line.reason = rec->reason;
      }
    }
    if (now.actuator) {
      if (const auto* d = FindIn<model::IopolicyDecision>(
              now.actuator->last_decision, s.name)) {
        line.decision = DecisionLine(*d);
      }
    }
    f.subsystems.push_back(std::move(line));
  }
  for (const model::Head& h : t.heads) {
    HeadRow row;
    row.subsystem = h.subsystem;
    row.head = h.name;
    for (const model::Path& p : t.paths) row.paths += p.head == h.name;
    const model::IoRates* hr = Find(r ? &r->heads : nullptr, h.name);
    row.read = WindowOf(hr, model::Op::kRead);
    row.write = WindowOf(hr, model::Op::kWrite);
    if (now.scoring) {
      if (const auto* hs =
              FindIn<model::HeadScoring>(now.scoring->heads, h.name)) {
        row.paths_by_health = hs->paths_by_state;
        row.imbalance = hs->latency_imbalance_ratio;
      }
    }
    f.heads.push_back(std::move(row));
  }
  for (const model::Path& p : t.paths) {
    f.paths.push_back(MakePathRow(now, before, r, p));
  }
  if (now.datapath) AddDatapath(now, before, f);
  for (const model::Controller& c : t.controllers) {
    ControllerRow row = MakeControllerRow(now, before, r != nullptr, c);
    for (const PathRow& p : f.paths) {
      if (p.controller != c.name) continue;
      ++row.paths;
      row.read_iops += p.read.iops;
      row.write_iops += p.write.iops;
    }
    f.controllers.push_back(std::move(row));
  }
  for (const auto& [name, io] : now.device_io) {
    DeviceRow row;
    row.device = name;
    const model::IoRates* dr = Find(r ? &r->devices : nullptr, name);
    row.read = WindowOf(dr, model::Op::kRead);
    row.write = WindowOf(dr, model::Op::kWrite);
    f.devices.push_back(std::move(row));
  }
  SortFrame(f, SortKey::kName);
  return f;
}

}  // namespace pathwise::ui

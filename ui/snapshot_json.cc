// SPDX-License-Identifier: Apache-2.0
#include "ui/snapshot_json.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "collectors/kernel_strings.h"
#include "exporters/labels.h"
#include "ui/json_fields.h"

namespace pathwise::ui {
namespace {

using json_fields::Array;
using json_fields::Bad;
using json_fields::Bool;
using json_fields::Dev;
using json_fields::Field;
using json_fields::FieldError;
using json_fields::Int;
using json_fields::LabelOrBad;
using json_fields::Nanos;
using json_fields::Num;
using json_fields::OptNum;
using json_fields::OptObject;
using json_fields::OptU64;
using json_fields::Str;
using json_fields::StrOr;
using json_fields::U64;
using nlohmann::json;

void ParseController(const json& c, const std::string& sub,
                     const std::string& where, model::Topology& t) {
  model::Controller ctrl;
  ctrl.name = Str(c, "name", where);
  ctrl.subsystem = sub;
  ctrl.transport = Str(c, "transport", where);
  ctrl.address = Str(c, "address", where);
  ctrl.traddr = StrOr(c, "traddr");
  ctrl.trsvcid = StrOr(c, "trsvcid");
  ctrl.host_traddr = StrOr(c, "host_traddr");
  ctrl.host_iface = StrOr(c, "host_iface");
  collectors::SetControllerState(Str(c, "state", where), ctrl);
  ctrl.cntlid = StrOr(c, "cntlid");
  ctrl.numa_node = Int(c, "numa_node", where);
  if (std::optional<uint64_t> q = OptU64(c, "io_queues", where)) {
    ctrl.io_queues = static_cast<uint32_t>(*q);
  }
  if (const json* d = OptObject(c, "diag")) {
    const std::string w = where + ".diag";
    ctrl.diag.command_errors = OptU64(*d, "command_errors", w);
    ctrl.diag.resets = OptU64(*d, "resets", w);
    ctrl.diag.reconnects = OptU64(*d, "reconnects", w);
  }
  t.controllers.push_back(std::move(ctrl));
}

void ParsePath(const json& p, const model::Head& head, const std::string& where,
               model::Topology& t) {
  model::Path path;
  path.name = Str(p, "name", where);
  path.subsystem = head.subsystem;
  path.head = head.name;
  path.dev = Dev(p, where);
  path.controller = Str(p, "controller", where);
  collectors::SetAnaState(Str(p, "ana_state", where), path);
  path.numa_node = Int(p, "numa_node", where);
  if (const json* d = OptObject(p, "diag")) {
    const std::string w = where + ".diag";
    path.diag.failovers = OptU64(*d, "failovers", w);
    path.diag.command_retries = OptU64(*d, "command_retries", w);
    path.diag.command_errors = OptU64(*d, "command_errors", w);
  }
  t.paths.push_back(std::move(path));
}

// The topology tree, plus the advisor's recommendation and the actuator's
// last decision that hang off each subsystem.
void ParseTopology(const json& j, model::Snapshot& snap) {
  model::Topology& t = snap.topology;
  const json& subs = Array(j, "subsystems", "snapshot");
  for (size_t si = 0; si < subs.size(); ++si) {
    const json& s = subs[si];
    const std::string where = absl::StrCat("subsystems[", si, "]");
    model::Subsystem sub;
    sub.name = Str(s, "name", where);
    sub.nqn = Str(s, "nqn", where);
    collectors::SetIopolicy(Str(s, "iopolicy", where), sub);
    sub.model = StrOr(s, "model");
    sub.serial = StrOr(s, "serial");
    const json& heads = Array(s, "heads", where);
    for (size_t hi = 0; hi < heads.size(); ++hi) {
      const json& h = heads[hi];
      const std::string hw = absl::StrCat(where, ".heads[", hi, "]");
      model::Head head;
      head.name = Str(h, "name", hw);
      head.subsystem = sub.name;
      head.nsid = static_cast<uint32_t>(U64(h, "nsid", hw));
      head.dev = Dev(h, hw);
      if (const json* d = OptObject(h, "diag")) {
        head.diag.requeued_no_usable_path =
            OptU64(*d, "io_requeued_no_usable_path", hw + ".diag");
        head.diag.failed_no_available_path =
            OptU64(*d, "io_failed_no_available_path", hw + ".diag");
      }
      const json& paths = Array(h, "paths", hw);
      for (size_t pi = 0; pi < paths.size(); ++pi) {
        ParsePath(paths[pi], head, absl::StrCat(hw, ".paths[", pi, "]"), t);
      }
      t.heads.push_back(std::move(head));
    }
    const json& ctrls = Array(s, "controllers", where);
    for (size_t ci = 0; ci < ctrls.size(); ++ci) {
      ParseController(ctrls[ci], sub.name,
                      absl::StrCat(where, ".controllers[", ci, "]"), t);
    }
    if (const json* d = OptObject(s, "actuator_last_decision")) {
      const std::string w = where + ".actuator_last_decision";
      model::IopolicyDecision dec;
      dec.from = collectors::ParseIopolicy(Str(*d, "from", w))
                     .value_or(model::Iopolicy::kUnknown);
      dec.to = collectors::ParseIopolicy(Str(*d, "to", w))
                   .value_or(model::Iopolicy::kUnknown);
      dec.result = LabelOrBad(*d, "result", w, model::kAllDecisionResults,
                              exporters::DecisionResultLabel);
      dec.reason = Str(*d, "reason", w);
      dec.error = Str(*d, "error", w);
      dec.restore = Bool(*d, "restore", w);
      const json& at = Field(*d, "at", w);
      if (at.is_string()) {
        std::string err;
        if (!absl::ParseTime(absl::RFC3339_full, at.get<std::string>(), &dec.at,
                             &err)) {
          Bad(w + ".at", err);
        }
      }
      if (!snap.actuator) snap.actuator.emplace();
      snap.actuator->last_decision[sub.name] = std::move(dec);
    }
    t.subsystems.push_back(std::move(sub));
  }
  t.Sort();
}

model::LatencyHistogram Histogram(const json& h, const std::string& where,
                                  uint64_t* sum_ns) {
  const json& counts = Array(h, "counts", where);
  if (counts.size() != model::LatencyHistogram::kBuckets) {
    Bad(where + ".counts", absl::StrCat(counts.size(), " buckets, want ",
                                        model::LatencyHistogram::kBuckets));
  }
  model::LatencyHistogram out;
  for (size_t i = 0; i < counts.size(); ++i) {
    out.AddToBucket(i, U64(counts[i], absl::StrCat(where, ".counts[", i, "]")));
  }
  if (sum_ns != nullptr) *sum_ns = Nanos(Num(h, "sum_seconds", where));
  return out;
}

// The layout every histogram of the document shares: it must be the
// model's, or the counts would land in the wrong buckets.
void CheckLayout(const json& j) {
  const json& layout = Field(j, "latency_histogram", "snapshot");
  const json& bounds =
      Array(layout, "upper_bounds_seconds", "snapshot.latency_histogram");
  bool same = bounds.size() == model::LatencyHistogram::kFiniteBuckets;
  for (size_t i = 0; same && i < bounds.size(); ++i) {
    same = bounds[i].is_number() &&
           bounds[i].get<double>() ==
               model::LatencyHistogram::UpperBoundSeconds(i);
  }
  if (!same) {
    Bad("snapshot.latency_histogram",
        "bucket layout differs from this build's (another pathwise "
        "version?)");
  }
}

model::IoStats ParseIo(const json& io, const std::string& where) {
  model::IoStats out;
  const json& ops = Field(io, "ops", where);
  if (!ops.is_object()) Bad(where + ".ops", "not an object");
  for (model::Op op : model::kAllOps) {
    const std::string label(exporters::OpLabel(op));
    auto it = ops.find(label);
    if (it == ops.end()) continue;
    const std::string w = absl::StrCat(where, ".ops.", label);
    model::OpStats st;
    st.completed = U64(*it, "completed", w);
    st.bytes = U64(*it, "bytes", w);
    st.time_ns = Nanos(Num(*it, "time_seconds", w));
    st.errors = OptU64(*it, "errors", w);
    if (const json* h = OptObject(*it, "latency_seconds")) {
      st.latency = Histogram(*h, w + ".latency_seconds", nullptr);
    }
    out.op(op) = std::move(st);
  }
  out.inflight = OptU64(io, "inflight", where);
  return out;
}

void ParseIoMap(const json& io, const char* key,
                std::map<std::string, model::IoStats, std::less<>>& out) {
  const std::string where = absl::StrCat("io.", key);
  const json& m = Field(io, key, "io");
  if (!m.is_object()) Bad(where, "not an object");
  for (const auto& [name, v] : m.items()) {
    out[name] = ParseIo(v, absl::StrCat(where, ".", name));
  }
}

void ParseNvme(const json& j, model::Snapshot& snap) {
  const json* nvme = OptObject(j, "nvme");
  if (nvme == nullptr) return;
  for (const auto& [path, v] : nvme->items()) {
    const std::string w = absl::StrCat("nvme.", path);
    model::PathNvmeStats st;
    st.retries = U64(v, "retries", w);
    st.failovers = U64(v, "failovers", w);
    if (const json* classes = OptObject(v, "errors_by_class")) {
      std::array<uint64_t, model::kNvmeErrorClassCount> by{};
      for (model::NvmeStatusClass c : model::kNvmeErrorClasses) {
        const std::string label(exporters::NvmeStatusClassLabel(c));
        by[model::ErrorClassIndex(c)] =
            U64(*classes, label.c_str(), w + ".errors_by_class");
      }
      st.errors_by_class = by;
    }
    snap.path_nvme[path] = st;
  }
}

void ParseSampler(const json& j, model::Snapshot& snap) {
  const json* s = OptObject(j, "sampler");
  if (s == nullptr) return;
  model::SamplerStats st;
  const json& dropped = Field(*s, "dropped", "sampler");
  for (model::DropReason r : model::kAllDropReasons) {
    const std::string label(exporters::DropReasonLabel(r));
    st.dropped[model::Index(r)] =
        U64(dropped, label.c_str(), "sampler.dropped");
  }
  const json& programs = Array(*s, "programs", "sampler");
  for (size_t i = 0; i < programs.size(); ++i) {
    const std::string w = absl::StrCat("sampler.programs[", i, "]");
    st.programs.push_back({Str(programs[i], "name", w),
                           Nanos(Num(programs[i], "run_time_seconds", w)),
                           U64(programs[i], "run_count", w)});
  }
  snap.sampler = std::move(st);
}

void ParseProbes(const json& j, model::Snapshot& snap) {
  const json* probes = OptObject(j, "probes");
  if (probes == nullptr) return;
  for (const auto& [name, v] : probes->items()) {
    const std::string w = absl::StrCat("probes.", name);
    model::ControllerProbeStats st;
    st.latency = Histogram(Field(v, "latency_seconds", w),
                           w + ".latency_seconds", &st.latency_sum_ns);
    const json& failures = Field(v, "failures", w);
    for (model::ProbeFailure f : model::kAllProbeFailures) {
      const std::string label(exporters::ProbeFailureLabel(f));
      st.failures[model::Index(f)] =
          U64(failures, label.c_str(), w + ".failures");
    }
    st.unreachable = Bool(v, "unreachable", w);
    snap.controller_probe[name] = std::move(st);
  }
}

void ParsePathScoring(const json& p, const std::string& w,
                      model::PathScoring& ps) {
  ps.health = LabelOrBad(p, "health", w, model::kAllPathHealth,
                         exporters::PathHealthLabel);
  const json& weight = Field(p, "weight", w);
  const json& ewma = Field(p, "latency_ewma_seconds", w);
  for (model::OpGroup g : model::kAllOpGroups) {
    const std::string label(exporters::OpGroupLabel(g));
    ps.weight[model::Index(g)] =
        static_cast<uint32_t>(U64(weight, label.c_str(), w + ".weight"));
    ps.latency_ewma_seconds[model::Index(g)] =
        OptNum(ewma, label.c_str(), w + ".latency_ewma_seconds");
  }
  ps.score = OptNum(p, "score", w);
  ps.sample_age_seconds = OptNum(p, "sample_age_seconds", w);
}

void ParseScoring(const json& j, model::Snapshot& snap) {
  const json* s = OptObject(j, "scoring");
  if (s == nullptr) return;
  model::Scoring sc;
  for (const auto& [name, p] : Field(*s, "paths", "scoring").items()) {
    ParsePathScoring(p, absl::StrCat("scoring.paths.", name), sc.paths[name]);
  }
  for (const auto& [name, h] : Field(*s, "heads", "scoring").items()) {
    const std::string w = absl::StrCat("scoring.heads.", name);
    model::HeadScoring hs;
    const json& by = Field(h, "paths_by_state", w);
    for (model::PathHealth st : model::kAllPathHealth) {
      const std::string label(exporters::PathHealthLabel(st));
      hs.paths_by_state[model::Index(st)] =
          static_cast<int>(U64(by, label.c_str(), w + ".paths_by_state"));
    }
    hs.latency_imbalance_ratio = OptNum(h, "latency_imbalance_ratio", w);
    sc.heads[name] = hs;
  }
  for (const auto& [name, a] :
       Field(*s, "iopolicy_recommended", "scoring").items()) {
    const std::string w = absl::StrCat("scoring.iopolicy_recommended.", name);
    // An iopolicy the advisor does not choose among is its "keep the
    // current one" (kUnknown), which the document spells as that policy.
    const std::optional<model::Iopolicy> p =
        collectors::ParseIopolicy(Str(a, "iopolicy", w));
    sc.iopolicy_recommended[name] = {p.value_or(model::Iopolicy::kUnknown),
                                     Str(a, "reason", w)};
  }
  snap.scoring = std::move(sc);
}

void ParseHeader(const json& j, model::Snapshot& snap) {
  snap.generation = U64(j, "generation", "snapshot");
  const json& at = Field(j, "collected_at", "snapshot");
  if (at.is_string()) {
    std::string err;
    if (!absl::ParseTime(absl::RFC3339_full, at.get<std::string>(),
                         &snap.collected_at, &err)) {
      Bad("snapshot.collected_at", err);
    }
  }
  const std::string source = Str(j, "io_source", "snapshot");
  snap.io_source = source == exporters::IoSourceLabel(model::IoSource::kBpf)
                       ? model::IoSource::kBpf
                   : source == exporters::IoSourceLabel(model::IoSource::kSysfs)
                       ? model::IoSource::kSysfs
                       : model::IoSource::kNone;
  snap.topology_changes_total = U64(j, "topology_changes_total", "snapshot");
  // Absent from an older agent's snapshot and from the datapath's.
  if (const json* m = OptObject(j, "multipath")) {
    snap.topology.subsystem_class = Bool(*m, "subsystem_class", "multipath");
  }
  const json& collectors = Array(j, "collectors", "snapshot");
  for (size_t i = 0; i < collectors.size(); ++i) {
    const std::string w = absl::StrCat("collectors[", i, "]");
    snap.collectors.push_back({Str(collectors[i], "name", w),
                               Num(collectors[i], "duration_seconds", w),
                               Bool(collectors[i], "success", w),
                               Str(collectors[i], "error", w)});
  }
}

// The userspace datapath's "datapath" object (absent in an agent's
// snapshot).
void ParseDatapath(const json& j, model::Snapshot& snap) {
  const json* d = OptObject(j, "datapath");
  if (d == nullptr) return;
  const std::string w = "datapath";
  model::DatapathReport r;
  r.device = Str(*d, "device", w);
  r.policy = Str(*d, "policy", w);
  r.requests = U64(*d, "requests", w);
  r.failed_requests = U64(*d, "failed_requests", w);
  r.no_path_waits = U64(*d, "no_path_waits", w);
  r.no_path_timeouts = U64(*d, "no_path_timeouts", w);
  const json& paths = Array(*d, "paths", w);
  for (size_t i = 0; i < paths.size(); ++i) {
    const std::string pw = absl::StrCat(w, ".paths[", i, "]");
    model::DatapathPathReport p;
    p.path = Str(paths[i], "name", pw);
    p.selections = U64(paths[i], "selections", pw);
    p.state = LabelOrBad(paths[i], "state", pw, model::kAllDatapathPathStates,
                         exporters::DatapathPathStateLabel);
    p.probing = Bool(paths[i], "probing", pw);
    p.inflight = U64(paths[i], "inflight", pw);
    r.paths.push_back(std::move(p));
  }
  snap.datapath = std::move(r);
}

}  // namespace

absl::StatusOr<model::Snapshot> SnapshotFromJson(const json& j) {
  if (!j.is_object() || !j.contains("generation") ||
      !j.contains("subsystems") || !j.contains("io")) {
    return absl::InvalidArgumentError(
        "not a pathwise snapshot (no \"generation\", \"subsystems\" and "
        "\"io\")");
  }
  model::Snapshot snap;
  try {
    ParseHeader(j, snap);
    CheckLayout(j);
    ParseTopology(j, snap);
    const json& io = Field(j, "io", "snapshot");
    ParseIoMap(io, "paths", snap.path_io);
    ParseIoMap(io, "heads", snap.head_io);
    ParseIoMap(io, "devices", snap.device_io);
    ParseNvme(j, snap);
    ParseSampler(j, snap);
    ParseProbes(j, snap);
    ParseScoring(j, snap);
    ParseDatapath(j, snap);
  } catch (const FieldError& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed pathwise snapshot: ", e.what()));
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed pathwise snapshot: ", e.what()));
  }
  return snap;
}

absl::StatusOr<model::Snapshot> SnapshotFromJsonText(absl::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return absl::InvalidArgumentError("not JSON");
  return SnapshotFromJson(j);
}

}  // namespace pathwise::ui

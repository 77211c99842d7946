// SPDX-License-Identifier: Apache-2.0
#include "scoring/stage.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

namespace pathwise::scoring {
namespace {

// Saturating delta: a counter that went backwards (a path re-created, the
// sampler restarted) contributes nothing this window.
uint64_t Delta(uint64_t now, uint64_t before) {
  return now >= before ? now - before : 0;
}

}  // namespace

bool KernelHasQueueDepth(absl::string_view release) {
  std::vector<absl::string_view> parts =
      absl::StrSplit(release, absl::MaxSplits(absl::ByAnyChar(".-+"), 2));
  int major = 0, minor = 0;
  if (parts.size() < 2 || !absl::SimpleAtoi(parts[0], &major) ||
      !absl::SimpleAtoi(parts[1], &minor)) {
    return true;
  }
  return major > 6 || (major == 6 && minor >= 11);
}

model::Scoring ScoringStage::Score(const model::Topology& topo,
                                   const PathIo& path_io,
                                   const PathNvme& path_nvme,
                                   const ControllerProbes& controller_probe) {
  model::Scoring out;
  ScoreHeads(
      TakeWindows(topo, path_io, path_nvme, TakeProbeWindows(controller_probe)),
      out);
  AdviseSubsystems(topo, out);
  return out;
}

std::map<std::string, ScoringStage::ProbeWindow, std::less<>>
ScoringStage::TakeProbeWindows(const ControllerProbes& controller_probe) {
  std::map<std::string, ProbeWindow, std::less<>> windows;
  std::map<std::string, ProbeCounters, std::less<>> current;
  for (const auto& [name, stats] : controller_probe) {
    ProbeCounters now;
    now.sample = {stats.latency.Count(), stats.latency_sum_ns};
    for (model::ProbeFailure f : model::kAllProbeFailures) {
      if (model::ProbeFailureMeansUnreachable(f)) {
        now.unreachable_failures += stats.failures[model::Index(f)];
      }
    }
    ProbeWindow& w = windows[name];
    w.unreachable = stats.unreachable;
    if (auto prev = previous_probe_.find(name); prev != previous_probe_.end()) {
      const ProbeCounters& before = prev->second;
      w.sample.count = Delta(now.sample.count, before.sample.count);
      w.sample.latency_sum_ns =
          Delta(now.sample.latency_sum_ns, before.sample.latency_sum_ns);
      if (w.sample.count == 0) w.sample.latency_sum_ns = 0;
      w.unreachable |=
          Delta(now.unreachable_failures, before.unreachable_failures) > 0;
    }
    current[name] = now;
  }
  previous_probe_ = std::move(current);
  return windows;
}

ScoringStage::Windows ScoringStage::TakeWindows(
    const model::Topology& topo, const PathIo& path_io,
    const PathNvme& path_nvme,
    const std::map<std::string, ProbeWindow, std::less<>>& probes) {
  std::map<std::string, Counters, std::less<>> current;
  Windows windows;
  for (const model::Head& h : topo.heads) windows[h.name];

  for (const model::Path& p : topo.paths) {
    scoring::PathWindow w;
    w.path = p.name;
    w.numa_node = p.numa_node;
    w.usable = scoring::IsUsable(p, topo.FindController(p.controller));

    auto io = path_io.find(p.name);
    if (io != path_io.end()) {
      Counters now;
      for (model::Op o : model::kAllOps) {
        const std::optional<model::OpStats>& op = io->second.op(o);
        if (!op) continue;
        scoring::OpSample& s = now.ops[model::Index(model::GroupOf(o))];
        s.count += op->completed;
        s.latency_sum_ns += op->time_ns;
      }
      if (auto nv = path_nvme.find(p.name); nv != path_nvme.end()) {
        now.failovers = nv->second.failovers;
        if (const auto& errors = nv->second.errors_by_class) {
          now.path_errors +=
              (*errors)[model::ErrorClassIndex(model::NvmeStatusClass::kPath)];
        }
      }
      if (auto prev = previous_.find(p.name); prev != previous_.end()) {
        const Counters& before = prev->second;
        for (int g = 0; g < model::kOpGroupCount; ++g) {
          const uint64_t n = Delta(now.ops[g].count, before.ops[g].count);
          const uint64_t sum =
              Delta(now.ops[g].latency_sum_ns, before.ops[g].latency_sum_ns);
          if (n > 0) w.ops[g] = {n, sum};
        }
        w.failovers = Delta(now.failovers, before.failovers);
        w.errors = Delta(now.path_errors, before.path_errors);
      }
      current[p.name] = now;
    } else if (auto prev = previous_.find(p.name); prev != previous_.end()) {
      // No statistics this window (the I/O collector failed for it): keep
      // the baseline so the next window's delta spans both.
      current[p.name] = prev->second;
    }
    // Probes: an op group without I/O this window takes the controller's
    // probe latency as its sample, and a controller that cannot be reached
    // makes its paths unusable before any I/O has to find out.
    if (auto pr = probes.find(p.controller); pr != probes.end()) {
      if (pr->second.unreachable) w.usable = false;
      if (pr->second.sample.count > 0) {
        for (scoring::OpSample& s : w.ops) {
          if (s.count == 0) s = pr->second.sample;
        }
      }
    }
    if (auto it = windows.find(p.head); it != windows.end()) {
      it->second.push_back(std::move(w));
    }
  }
  previous_ = std::move(current);
  return windows;
}

void ScoringStage::ScoreHeads(const Windows& windows, model::Scoring& out) {
  // Heads that vanished are forgotten; new ones start fresh.
  for (auto it = heads_.begin(); it != heads_.end();) {
    it = windows.contains(it->first) ? std::next(it) : heads_.erase(it);
  }
  const double interval_s = absl::ToDoubleSeconds(options_.interval);
  for (const auto& [head, window] : windows) {
    auto [it, inserted] = heads_.try_emplace(head, options_.config);
    scoring::HeadScorer& scorer = it->second;
    scorer.Update(window);
    for (const scoring::PathScore& ps : scorer.paths()) {
      out.paths[ps.path] = ToModel(ps, interval_s);
    }
    out.heads[head] = ToModel(scorer.Summary());
  }
}

void ScoringStage::AdviseSubsystems(const model::Topology& topo,
                                    model::Scoring& out) const {
  for (const model::Subsystem& s : topo.subsystems) {
    scoring::AdvisorInput in;
    in.current_iopolicy = s.iopolicy;
    in.current_is_foreign = !s.unknown_iopolicy.empty();
    in.kernel_has_queue_depth = options_.kernel_has_queue_depth;
    for (const model::Head& h : topo.heads) {
      if (h.subsystem != s.name) continue;
      if (auto it = heads_.find(h.name); it != heads_.end()) {
        in.heads.push_back(&it->second);
      }
    }
    scoring::Advice advice = scoring::Advise(in, options_.config);
    out.iopolicy_recommended[s.name] = {advice.iopolicy,
                                        std::move(advice.reason)};
  }
}

}  // namespace pathwise::scoring

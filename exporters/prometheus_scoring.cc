// SPDX-License-Identifier: Apache-2.0
// Scoring families (scoring/stage.h, docs/scoring.md): per
// path EWMA, weight, score, health and sample age; per head the paths by
// state and the latency imbalance; per subsystem the advised iopolicy.
#include <string>
#include <vector>

#include "exporters/labels.h"
#include "exporters/prometheus_internal.h"

namespace pathwise::exporters::internal {
namespace {

using prometheus::MetricFamily;
using prometheus::MetricType;

void AddPathScoringFamilies(const model::Topology& topo,
                            const model::Scoring& scoring,
                            MetricsProfile profile,
                            std::vector<MetricFamily>& out) {
  MetricFamily ewma =
      Family("pathwise_path_latency_ewma_seconds",
             "EWMA of a path's mean completion latency per window, by op group "
             "(read, write, other); see docs/scoring.md.",
             MetricType::Gauge);
  MetricFamily weight = Family(
      "pathwise_path_weight",
      "Weight of a path among its head's usable paths by op group, 0-64: "
      "64 x (1/EWMA) / sum of the siblings' (1/EWMA), at least 1 when usable, "
      "0 when not.",
      MetricType::Gauge);
  MetricFamily score = Family(
      "pathwise_path_score",
      "100 x the best usable sibling's latency EWMA / this path's (100 = the "
      "best path), the lowest over op groups.",
      MetricType::Gauge);
  MetricFamily health = Family(
      "pathwise_path_health",
      "Health of a path as a StateSet (healthy, degraded, failed, idle): 1 "
      "for the current state, 0 for the others.",
      MetricType::Gauge);
  MetricFamily age =
      Family("pathwise_path_sample_age_seconds",
             "Time since the last window in which the path completed an I/O.",
             MetricType::Gauge);
  for (const model::Path& p : topo.paths) {
    auto it = scoring.paths.find(p.name);
    if (it == scoring.paths.end()) continue;
    const model::PathScoring& ps = it->second;
    const Labels base = PathLabels(p);
    for (model::OpGroup group : model::kAllOpGroups) {
      const size_t g = model::Index(group);
      const Labels l =
          With(base, {{"op_group", std::string(OpGroupLabel(group))}});
      if (ps.latency_ewma_seconds[g]) {
        AddGauge(ewma, l, *ps.latency_ewma_seconds[g]);
      }
      AddGauge(weight, l, ps.weight[g]);
    }
    if (ps.score) AddGauge(score, base, *ps.score);
    for (model::PathHealth st : model::kAllPathHealth) {
      if (profile == MetricsProfile::kDefault && ps.health != st) continue;
      AddGauge(health,
               With(base, {{"state", std::string(PathHealthLabel(st))}}),
               ps.health == st ? 1 : 0);
    }
    if (ps.sample_age_seconds) AddGauge(age, base, *ps.sample_age_seconds);
  }
  Push(out, std::move(ewma));
  Push(out, std::move(weight));
  Push(out, std::move(score));
  Push(out, std::move(health));
  Push(out, std::move(age));
}

void AddHeadScoringFamilies(const model::Topology& topo,
                            const model::Scoring& scoring,
                            std::vector<MetricFamily>& out) {
  MetricFamily head_paths =
      Family("pathwise_head_paths", "Paths of a head by health state.",
             MetricType::Gauge);
  MetricFamily imbalance = Family(
      "pathwise_head_latency_imbalance_ratio",
      "Worst usable path's latency EWMA over the best's (the largest over op "
      "groups); 1 = balanced.",
      MetricType::Gauge);
  for (const model::Head& h : topo.heads) {
    auto it = scoring.heads.find(h.name);
    if (it == scoring.heads.end()) continue;
    for (model::PathHealth st : model::kAllPathHealth) {
      AddGauge(
          head_paths,
          With(HeadLabels(h), {{"state", std::string(PathHealthLabel(st))}}),
          it->second.paths_by_state[model::Index(st)]);
    }
    if (it->second.latency_imbalance_ratio) {
      AddGauge(imbalance, HeadLabels(h), *it->second.latency_imbalance_ratio);
    }
  }
  Push(out, std::move(head_paths));
  Push(out, std::move(imbalance));
}

void AddSubsystemScoringFamilies(const model::Topology& topo,
                                 const model::Scoring& scoring,
                                 std::vector<MetricFamily>& out) {
  MetricFamily advised = Family(
      "pathwise_subsystem_iopolicy_recommended",
      "The iopolicy the evidence favours for a subsystem now, as a StateSet "
      "(numa, round-robin, queue-depth); pathwise writes it only with "
      "--actuate=on.",
      MetricType::Gauge);
  for (const model::Subsystem& s : topo.subsystems) {
    auto it = scoring.iopolicy_recommended.find(s.name);
    if (it == scoring.iopolicy_recommended.end()) continue;
    for (model::Iopolicy pol : model::kAdvisedIopolicies) {
      AddGauge(advised,
               {{"subsystem", s.name},
                {"iopolicy", std::string(IopolicyLabel(pol))}},
               it->second.iopolicy == pol ? 1 : 0);
    }
  }
  Push(out, std::move(advised));
}

}  // namespace

void AddScoringFamilies(const model::Topology& topo,
                        const model::Scoring& scoring, MetricsProfile profile,
                        std::vector<MetricFamily>& out) {
  AddPathScoringFamilies(topo, scoring, profile, out);
  AddHeadScoringFamilies(topo, scoring, out);
  AddSubsystemScoringFamilies(topo, scoring, out);
}

}  // namespace pathwise::exporters::internal

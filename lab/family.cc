// SPDX-License-Identifier: Apache-2.0
#include "lab/family.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lab/parallel.h"
#include "lab/sim.h"
#include "lab/timeline.h"
#include "nlohmann/json.hpp"

namespace pathwise::lab {

std::vector<ScenarioOutcome> RunFamily(
    const std::vector<Scenario>& scenarios,
    const std::vector<policy::Policy>& policies, int jobs, bool by_phase) {
  std::vector<ScenarioOutcome> out(scenarios.size());
  for (size_t i = 0; i < scenarios.size(); ++i) {
    out[i].name = scenarios[i].name;
    out[i].results.resize(policies.size());
    const std::vector<Phase> phases = Phases(scenarios[i]);
    if (by_phase && phases.size() > 1 && phases.size() <= kMaxPhaseTables) {
      for (const Phase& ph : phases) out[i].phase_labels.push_back(ph.label);
      out[i].phases.assign(phases.size(),
                           std::vector<PolicyResult>(policies.size()));
    }
  }
  const size_t pairs = scenarios.size() * policies.size();
  ParallelFor(pairs, jobs, [&](size_t k) {
    const size_t s = k / policies.size(), p = k % policies.size();
    const Scenario& sc = scenarios[s];
    if (out[s].phases.empty()) {
      out[s].results[p] = Simulate(sc, policies[p], sc.seed);
      return;
    }
    // A recorder of its own per run (one time bin: only the phases are
    // read), so that no run waits on another's.
    TimelineRecorder rec(sc, 1, 1);
    out[s].results[p] = Simulate(sc, policies[p], sc.seed, rec.Observer(0));
    const Timeline tl = rec.Result(0, out[s].results[p]);
    for (size_t ph = 0; ph < tl.phases.size() && ph < out[s].phases.size();
         ++ph) {
      out[s].phases[ph][p] = tl.phases[ph];
    }
  });
  return out;
}

namespace {

std::string Goal(bool met) { return met ? "met" : "MISSED"; }

}  // namespace

std::string FormatLeague(const std::string& title,
                         const std::vector<ScenarioOutcome>& family,
                         const std::vector<LeagueEntry>& league,
                         size_t max_losses) {
  std::string out = absl::StrCat(title, "\n\n");
  absl::StrAppend(
      &out,
      "throughput / the scenario's best (1 = best), and / the best other "
      "policy;\np99 and p999 / the scenario's lowest (1 = lowest)\n\n");
  absl::StrAppendFormat(
      &out, "%-12s %7s %7s %7s | %9s %9s %7s | %7s %7s | %7s %7s\n", "policy",
      "median", "p5", "worst", "other p5", "other min", "≥0.97", "p99 med",
      "p99 max", "p999 med", "p999 max");
  for (const LeagueEntry& e : league) {
    absl::StrAppendFormat(
        &out,
        "%-12s %7.3f %7.3f %7.3f | %9.3f %9.3f %6.1f%% | %7.2f %7.2f | %7.2f "
        "%7.2f\n",
        policy::PolicyName(e.policy), e.median, e.p5, e.worst,
        e.vs_best_other_p5, e.vs_best_other_worst, 100 * e.share_within_3pct,
        e.p99_median, e.p99_worst, e.p999_median, e.p999_worst);
  }
  absl::StrAppend(&out,
                  "\nlosses by more than 3 % against the best other "
                  "policy (throughput ratio), worst first:\n");
  for (const LeagueEntry& e : league) {
    absl::StrAppendFormat(&out, "  %s: %d of %d", policy::PolicyName(e.policy),
                          e.losses.size(), family.size());
    for (size_t i = 0; i < e.losses.size() && i < max_losses; ++i) {
      absl::StrAppendFormat(&out, "%s %s %.3f", i == 0 ? ":" : ",",
                            e.losses[i].scenario, e.losses[i].ratio);
    }
    if (e.losses.size() > max_losses) {
      absl::StrAppend(&out, ", ", e.losses.size() - max_losses, " more");
    }
    absl::StrAppend(&out, "\n");
  }
  const bool ran_pathwise =
      std::any_of(league.begin(), league.end(), [](const LeagueEntry& e) {
        return e.policy == policy::Policy::kPathwise;
      });
  if (ran_pathwise) {
    const SelectorGoals g = CheckSelectorGoals(family);
    absl::StrAppendFormat(
        &out,
        "\nselector goals (pathwise against the best other policy):\n"
        "  >= 0.97x in >= 95 %% of scenarios: %.1f %%  %s\n"
        "  never below 0.90x:                worst %.3f (%s)  %s\n"
        "  p99 <= 1.1x the lowest where within 3 %%: worst %.2f (%s)  %s\n"
        "    over 1.1x in %d of %d scenarios; against only the policies at "
        ">= 0.97x its throughput: %d\n",
        100 * g.share_within_3pct, Goal(g.share_within_3pct >= 0.95), g.worst,
        g.worst_scenario, Goal(g.worst >= 0.90), g.worst_p99_where_close,
        g.worst_p99_scenario, Goal(g.worst_p99_where_close <= 1.1),
        g.p99_missed, g.p99_judged, g.p99_missed_comparable);
    if (g.phase_p99_judged > 0) {
      absl::StrAppendFormat(
          &out,
          "  the p99 rule per phase (not the goal; the spans between "
          "scripted events,\n  >= %d I/Os of the main op): over 1.1x in %d "
          "of %d phases, worst %.2f\n    (%s); against only the policies "
          "at >= 0.97x its throughput there: %d\n",
          kPhaseTailIos, g.phase_p99_missed, g.phase_p99_judged,
          g.worst_phase_p99, g.worst_phase_p99_where,
          g.phase_p99_missed_comparable);
    }
  }
  return out;
}

std::string FormatFamilyCsv(const std::vector<ScenarioOutcome>& family) {
  std::string out = "scenario,policy,mib_s,vs_best_other,p99_ms,p999_ms\n";
  for (const ScenarioOutcome& s : family) {
    for (const PolicyResult& r : s.results) {
      double best_other = 0;
      for (const PolicyResult& q : s.results) {
        if (&q != &r) best_other = std::max(best_other, Throughput(q));
      }
      absl::StrAppendFormat(&out, "%s,%s,%.3f,%.4f,%.4f,%.4f\n", s.name,
                            policy::PolicyName(r.policy), Throughput(r),
                            best_other > 0 ? Throughput(r) / best_other : 1.0,
                            MainOp(r).p99_ms, MainOp(r).p999_ms);
    }
  }
  return out;
}

std::string FormatLeagueJson(const std::string& title,
                             const std::vector<ScenarioOutcome>& family,
                             const std::vector<LeagueEntry>& league) {
  nlohmann::json j;
  j["title"] = title;
  j["scenarios"] = family.size();
  for (const LeagueEntry& e : league) {
    nlohmann::json losses = nlohmann::json::array();
    for (const Loss& l : e.losses) {
      losses.push_back({{"scenario", l.scenario}, {"ratio", l.ratio}});
    }
    j["league"].push_back({
        {"policy", policy::PolicyName(e.policy)},
        {"median", e.median},
        {"p5", e.p5},
        {"worst", e.worst},
        {"vs_best_other_p5", e.vs_best_other_p5},
        {"vs_best_other_worst", e.vs_best_other_worst},
        {"share_within_3pct", e.share_within_3pct},
        {"p99_median", e.p99_median},
        {"p99_worst", e.p99_worst},
        {"p999_median", e.p999_median},
        {"p999_worst", e.p999_worst},
        {"losses", losses},
    });
  }
  if (std::any_of(league.begin(), league.end(), [](const LeagueEntry& e) {
        return e.policy == policy::Policy::kPathwise;
      })) {
    const SelectorGoals g = CheckSelectorGoals(family);
    j["selector_goals"] = {
        {"share_within_3pct", g.share_within_3pct},
        {"worst", g.worst},
        {"worst_scenario", g.worst_scenario},
        {"worst_p99_where_close", g.worst_p99_where_close},
        {"worst_p99_scenario", g.worst_p99_scenario},
        {"met", g.met()},
        {"p99_judged", g.p99_judged},
        {"p99_missed", g.p99_missed},
        {"p99_missed_comparable", g.p99_missed_comparable},
        {"per_phase",
         {{"judged", g.phase_p99_judged},
          {"missed", g.phase_p99_missed},
          {"missed_comparable", g.phase_p99_missed_comparable},
          {"worst", g.worst_phase_p99},
          {"worst_where", g.worst_phase_p99_where}}},
    };
  }
  for (const ScenarioOutcome& s : family) {
    nlohmann::json runs = nlohmann::json::array();
    for (const PolicyResult& r : s.results) {
      runs.push_back({{"policy", policy::PolicyName(r.policy)},
                      {"mib_s", Throughput(r)},
                      {"p99_ms", MainOp(r).p99_ms},
                      {"p999_ms", MainOp(r).p999_ms}});
    }
    j["outcomes"].push_back({{"scenario", s.name}, {"runs", runs}});
  }
  return j.dump(1) + "\n";
}

}  // namespace pathwise::lab

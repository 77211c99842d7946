// SPDX-License-Identifier: Apache-2.0
#include "lab/league.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace pathwise::lab {

double Throughput(const PolicyResult& r) {
  return r.ops[0].mib_s + r.ops[1].mib_s;
}

const OpResult& MainOp(const PolicyResult& r) {
  return r.ops[1].ios > r.ops[0].ios ? r.ops[1] : r.ops[0];
}

namespace {

// Nearest-rank quantile of `v` (sorted here); 0 for none.
double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(std::ceil(q * v.size()));
  return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

}  // namespace

std::vector<LeagueEntry> League(const std::vector<ScenarioOutcome>& family) {
  std::vector<LeagueEntry> out;
  if (family.empty()) return out;
  const size_t n = family.front().results.size();
  out.resize(n);
  std::vector<std::vector<double>> ratio(n), other(n), p99(n), p999(n);
  for (const ScenarioOutcome& s : family) {
    if (s.results.size() != n) continue;
    double best = 0;
    double best_p99 = std::numeric_limits<double>::infinity();
    double best_p999 = best_p99;
    for (const PolicyResult& r : s.results) {
      best = std::max(best, Throughput(r));
      if (MainOp(r).ios > 0) {
        best_p99 = std::min(best_p99, MainOp(r).p99_ms);
        best_p999 = std::min(best_p999, MainOp(r).p999_ms);
      }
    }
    if (best <= 0) continue;  // nothing completed: no contest
    for (size_t i = 0; i < n; ++i) {
      const PolicyResult& r = s.results[i];
      double best_other = 0;
      for (size_t j = 0; j < n; ++j) {
        if (j != i) best_other = std::max(best_other, Throughput(s.results[j]));
      }
      const double t = Throughput(r);
      ratio[i].push_back(t / best);
      const double vs = best_other > 0 ? t / best_other : 1;
      other[i].push_back(vs);
      if (vs < 0.97) out[i].losses.push_back({s.name, vs});
      if (MainOp(r).ios > 0 && best_p99 > 0) {
        p99[i].push_back(MainOp(r).p99_ms / best_p99);
        p999[i].push_back(MainOp(r).p999_ms / best_p999);
      }
    }
  }
  for (size_t i = 0; i < n; ++i) {
    LeagueEntry& e = out[i];
    e.policy = family.front().results[i].policy;
    e.median = Quantile(ratio[i], 0.5);
    e.p5 = Quantile(ratio[i], 0.05);
    e.worst = Quantile(ratio[i], 0);
    e.vs_best_other_p5 = Quantile(other[i], 0.05);
    e.vs_best_other_worst = Quantile(other[i], 0);
    const auto within = std::count_if(other[i].begin(), other[i].end(),
                                      [](double v) { return v >= 0.97; });
    e.share_within_3pct =
        other[i].empty() ? 0 : static_cast<double>(within) / other[i].size();
    e.p99_median = Quantile(p99[i], 0.5);
    e.p99_worst = Quantile(p99[i], 1);
    e.p999_median = Quantile(p999[i], 0.5);
    e.p999_worst = Quantile(p999[i], 1);
    std::sort(e.losses.begin(), e.losses.end(),
              [](const Loss& a, const Loss& b) { return a.ratio < b.ratio; });
  }
  return out;
}

namespace {

// One contest (a scenario, or one of its phases) where the tail rule
// applies or not: pathwise's result, the best other policy's throughput,
// and the lowest p99 of the policies whose main op completed at least
// `min_ios` I/Os, of all of them and of those that served at least 0.97x
// pathwise's throughput.
struct Contest {
  const PolicyResult* pw = nullptr;
  double best_other = 0;
  double lowest_p99 = std::numeric_limits<double>::infinity();
  double lowest_p99_comparable = std::numeric_limits<double>::infinity();
  uint64_t min_ios = 1;

  // pathwise's p99 over `lowest` where the rule applies (its throughput
  // within 3 % of the best other's, min_ios completions of its main op);
  // 0 where it does not.
  double Tail(double lowest) const {
    if (pw == nullptr || best_other <= 0 || MainOp(*pw).ios < min_ios ||
        !(lowest > 0) || Throughput(*pw) / best_other < 0.97) {
      return 0;
    }
    return MainOp(*pw).p99_ms / lowest;
  }
};

Contest Judge(const std::vector<PolicyResult>& results, uint64_t min_ios) {
  Contest c;
  c.min_ios = min_ios;
  for (const PolicyResult& r : results) {
    if (r.policy == policy::Policy::kPathwise) {
      c.pw = &r;
    } else {
      c.best_other = std::max(c.best_other, Throughput(r));
    }
  }
  for (const PolicyResult& r : results) {
    if (MainOp(r).ios < min_ios) continue;
    c.lowest_p99 = std::min(c.lowest_p99, MainOp(r).p99_ms);
    if (c.pw == nullptr || Throughput(r) >= 0.97 * Throughput(*c.pw)) {
      c.lowest_p99_comparable =
          std::min(c.lowest_p99_comparable, MainOp(r).p99_ms);
    }
  }
  return c;
}

}  // namespace

SelectorGoals CheckSelectorGoals(const std::vector<ScenarioOutcome>& family) {
  SelectorGoals g;
  size_t n = 0, within = 0;
  g.worst = std::numeric_limits<double>::infinity();
  for (const ScenarioOutcome& s : family) {
    const Contest c = Judge(s.results, 1);
    if (c.pw == nullptr || c.best_other <= 0) continue;
    ++n;
    const double vs = Throughput(*c.pw) / c.best_other;
    within += vs >= 0.97;
    if (vs < g.worst) {
      g.worst = vs;
      g.worst_scenario = s.name;
    }
    if (const double tail = c.Tail(c.lowest_p99); tail > 0) {
      ++g.p99_judged;
      g.p99_missed += tail > 1.1;
      g.p99_missed_comparable += c.Tail(c.lowest_p99_comparable) > 1.1;
      if (tail > g.worst_p99_where_close) {
        g.worst_p99_where_close = tail;
        g.worst_p99_scenario = s.name;
      }
    }
    for (size_t ph = 0; ph < s.phases.size(); ++ph) {
      const Contest pc = Judge(s.phases[ph], kPhaseTailIos);
      const double tail = pc.Tail(pc.lowest_p99);
      if (tail <= 0) continue;
      ++g.phase_p99_judged;
      g.phase_p99_missed += tail > 1.1;
      g.phase_p99_missed_comparable += pc.Tail(pc.lowest_p99_comparable) > 1.1;
      if (tail > g.worst_phase_p99) {
        g.worst_phase_p99 = tail;
        g.worst_phase_p99_where =
            s.name + ": " +
            (ph < s.phase_labels.size() ? s.phase_labels[ph] : "?");
      }
    }
  }
  if (n == 0) return SelectorGoals{};
  g.share_within_3pct = static_cast<double>(within) / n;
  return g;
}

}  // namespace pathwise::lab

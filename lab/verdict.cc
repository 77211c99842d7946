// SPDX-License-Identifier: Apache-2.0
#include "lab/verdict.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lab/league.h"
#include "policy/policy.h"

namespace pathwise::lab {

Verdict Decide(const std::vector<PolicyResult>& results) {
  Verdict v;
  double best = 0, best_set = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    const double t = Throughput(results[i]);
    if (t > best) {
      best = t;
      v.best_overall = i;
    }
    if (policy::IsKernelIopolicy(results[i].policy) && t > best_set) {
      best_set = t;
      v.best_settable = i;
    }
  }
  if (!v.best_settable) return v;
  v.overall_vs_settable = best / best_set;
  for (size_t i = 0; i < results.size(); ++i) {
    if (i == *v.best_settable || !policy::IsKernelIopolicy(results[i].policy)) {
      continue;
    }
    const double t = Throughput(results[i]);
    v.settable_ratios.emplace_back(i, t > 0 ? best_set / t : 0);
  }
  // Best first: the smallest ratio; "completed nothing" (0) last.
  std::stable_sort(v.settable_ratios.begin(), v.settable_ratios.end(),
                   [](const auto& a, const auto& b) {
                     const double x = a.second > 0 ? a.second : 1e300;
                     const double y = b.second > 0 ? b.second : 1e300;
                     return x < y;
                   });
  return v;
}

std::string VerdictLines(const std::vector<PolicyResult>& results,
                         const Verdict& v) {
  constexpr double kTie = 1.01;
  auto name = [&](size_t i) { return policy::PolicyName(results[i].policy); };
  if (!v.best_overall) {
    return "best policy you can set: none: no policy completed an I/O\n";
  }
  std::string out = "best policy you can set: ";
  if (!v.best_settable) {
    absl::StrAppend(&out,
                    "none run (add numa, round-robin or queue-depth to "
                    "--policies, or none of them completed an I/O)\n");
  } else {
    absl::StrAppend(&out, name(*v.best_settable), " (");
    if (v.settable_ratios.empty()) {
      absl::StrAppend(&out, "the only kernel iopolicy run");
    }
    for (size_t k = 0; k < v.settable_ratios.size(); ++k) {
      const auto& [i, ratio] = v.settable_ratios[k];
      absl::StrAppend(&out, k ? ", " : "");
      if (ratio > 0) {
        absl::StrAppendFormat(&out, "%.2f× %s", ratio, name(i));
      } else {
        absl::StrAppend(&out, name(i), " completed nothing");
      }
    }
    absl::StrAppend(&out, ")\n");
  }
  // Within 1 %, a selector the kernel lacks is no reason to look further.
  if (v.best_settable && *v.best_overall != *v.best_settable &&
      v.overall_vs_settable < kTie) {
    absl::StrAppendFormat(&out,
                          "best overall: %s, the best you can set (%s is "
                          "within 1 %%)\n",
                          name(*v.best_settable), name(*v.best_overall));
    return out;
  }
  absl::StrAppend(&out, "best overall: ", name(*v.best_overall));
  if (v.best_settable && *v.best_overall == *v.best_settable) {
    absl::StrAppend(&out, ", the best you can set\n");
  } else {
    if (v.best_settable) {
      absl::StrAppendFormat(&out, ", %.2f× %s", v.overall_vs_settable,
                            name(*v.best_settable));
    }
    absl::StrAppend(&out, " (",
                    policy::NotSettableReason(results[*v.best_overall].policy),
                    ")\n");
  }
  return out;
}

std::vector<double> XBest(const std::vector<PolicyResult>& results) {
  double best = 0;
  for (const PolicyResult& r : results) best = std::max(best, Throughput(r));
  std::vector<double> out;
  for (const PolicyResult& r : results) {
    out.push_back(best > 0 ? Throughput(r) / best : 0);
  }
  return out;
}

}  // namespace pathwise::lab

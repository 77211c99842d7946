// SPDX-License-Identifier: Apache-2.0
// A scenario family run under each policy, and the league table's text and
// JSON: what `pathwise lab --league N` prints and the results file keeps.
#ifndef PATHWISE_LAB_FAMILY_H_
#define PATHWISE_LAB_FAMILY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "lab/league.h"
#include "lab/scenario.h"
#include "policy/policy.h"

namespace pathwise::lab {

// Every policy on every scenario (each with its own seed), on up to `jobs`
// threads that take (scenario, policy) pairs in turn; the result does not
// depend on `jobs`. With `by_phase`, each scenario with scripted events
// (2 to kMaxPhaseTables phases) also gets every policy's result per phase.
std::vector<ScenarioOutcome> RunFamily(
    const std::vector<Scenario>& scenarios,
    const std::vector<policy::Policy>& policies, int jobs,
    bool by_phase = false);

// The league table: one row per policy, then each policy's losses by more
// than 3 % (the worst `max_losses` of them, and how many more), then the
// selector's goals checked on this family (when `pathwise` ran), one line
// each with "met" or "MISSED", and the tail rule read per phase where the
// family has phases. `title` heads it.
std::string FormatLeague(const std::string& title,
                         const std::vector<ScenarioOutcome>& family,
                         const std::vector<LeagueEntry>& league,
                         size_t max_losses);

// Per scenario and policy: MiB/s, the ratio to the best other policy, p99
// and p999 of the op that completed more I/Os (CSV with a header line).
std::string FormatFamilyCsv(const std::vector<ScenarioOutcome>& family);

// The league, the selector's goals (when `pathwise` ran, with the tail
// rule's counts and its per-phase reading) and every outcome as one JSON
// document.
std::string FormatLeagueJson(const std::string& title,
                             const std::vector<ScenarioOutcome>& family,
                             const std::vector<LeagueEntry>& league);

}  // namespace pathwise::lab

#endif  // PATHWISE_LAB_FAMILY_H_

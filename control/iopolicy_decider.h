// SPDX-License-Identifier: Apache-2.0
// The iopolicy actuator's decisions, as pure logic: no I/O, no clock (the
// time is the snapshot's collected_at), no globals. It turns the advisor's
// recommendation (model::Scoring::iopolicy_recommended, docs/scoring.md)
// into at most one planned change per subsystem, with the safeguards:
//
//   - scope: only subsystems whose name or NQN matches
//     IopolicyActuatorConfig::subsystems (the whole string);
//   - known policies only: a subsystem whose iopolicy pathwise does not know
//     (a newer kernel's, or unreported) is left alone;
//   - hold: the advisor must have recommended the same policy, other than
//     the subsystem's, for `hold` (measured between the collection that
//     first showed it and this one); the hold starts again when the
//     recommendation changes, when it matches the subsystem's policy and
//     when the subsystem's policy changes (someone else set it: the
//     situation is new);
//   - one decision per recommendation: once a change was decided (applied,
//     dry_run or failed) it is not decided again until the recommendation
//     changes, so a failing write is not a retry loop, dry-run logs each
//     decision once, and a policy an administrator sets by hand afterwards
//     is not overridden while the recommendation stands;
//   - min_interval: at most one applied, dry-run or failed decision per
//     subsystem per `min_interval` (no flapping);
//   - only what the kernel offers: the kernel keeps no list of its
//     policies, so a policy it rejects (EINVAL) is recorded as refused for
//     that subsystem for the life of the process and never tried again;
//     where the advisor wants queue-depth and it is refused, round-robin
//     takes its place (the advisor's own choice for asymmetric paths on a
//     kernel without queue-depth), at once, within the same hold;
//   - restore bookkeeping: the policy found before pathwise's first change
//     and the one it wrote last, so that RestorePlans() undoes its changes.
#ifndef PATHWISE_CONTROL_IOPOLICY_DECIDER_H_
#define PATHWISE_CONTROL_IOPOLICY_DECIDER_H_

#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "model/actuation.h"
#include "model/topology.h"

namespace pathwise::control {

// The defaults here are the flags' defaults (--actuate*).
struct IopolicyActuatorConfig {
  model::ActuateMode mode = model::ActuateMode::kOff;
  absl::Duration hold = absl::Seconds(30);
  absl::Duration min_interval = absl::Minutes(5);
  // ECMAScript regular expression; a subsystem is in scope when it matches
  // its whole name (nvme-subsys0) or its whole NQN.
  std::string subsystems = ".*";
  bool restore = true;  // undo pathwise's changes on exit
};

// What is wrong with a --actuate-subsystems value ("" when it compiles).
std::string SubsystemRegexProblem(const std::string& regex);

// One change the decider asks for (or, on exit, a restore).
struct IopolicyPlan {
  std::string subsystem;
  model::Iopolicy from = model::Iopolicy::kUnknown;
  model::Iopolicy to = model::Iopolicy::kUnknown;
  std::string reason;  // with the figures behind it
  bool restore = false;
  // The advisor's recommendation behind it (`to` is its replacement when
  // the kernel refused it); kUnknown for a restore.
  model::Iopolicy advised = model::Iopolicy::kUnknown;
};

class IopolicyDecider {
 public:
  // Fails when config.subsystems is not a valid regular expression.
  static absl::StatusOr<IopolicyDecider> Create(IopolicyActuatorConfig config);

  const IopolicyActuatorConfig& config() const { return config_; }

  // Whether the subsystem is in scope (name or NQN matches).
  bool InScope(const model::Subsystem& s) const;

  // The change to make to `s` now, if any, given the snapshot's scoring
  // (null: no recommendation) at `now`. Updates the hold bookkeeping, so
  // call it once per subsystem per collection, and again only after a
  // refusal (Record) to get the replacement policy.
  std::optional<IopolicyPlan> Plan(const model::Subsystem& s,
                                   const model::Scoring* scoring,
                                   absl::Time now);

  // The outcome of a plan. A restore plan's outcome only updates what a
  // later restore would do.
  void Record(const IopolicyPlan& plan, model::DecisionResult result,
              absl::Time now);

  // For each subsystem pathwise changed and did not change back: a plan
  // from the policy it wrote last to the one it found.
  std::vector<IopolicyPlan> RestorePlans() const;

  // Whether the kernel refused `p` for subsystem `s`.
  bool Refused(absl::string_view s, model::Iopolicy p) const;

 private:
  struct SubsystemState {
    // The advisor's recommendation being held, the subsystem's policy
    // then, and since when.
    model::Iopolicy pending = model::Iopolicy::kUnknown;
    model::Iopolicy pending_from = model::Iopolicy::kUnknown;
    absl::Time pending_since = absl::InfinitePast();
    // The recommendation a decision was made for (kUnknown: none since it
    // last changed).
    model::Iopolicy decided_for = model::Iopolicy::kUnknown;
    absl::Time last_attempt = absl::InfinitePast();
    std::set<model::Iopolicy> refused;
    // Restore bookkeeping: what the subsystem had before pathwise's first
    // change (kUnknown: never changed) and what pathwise wrote last.
    model::Iopolicy found = model::Iopolicy::kUnknown;
    model::Iopolicy written = model::Iopolicy::kUnknown;
  };

  IopolicyDecider(IopolicyActuatorConfig config, std::regex re)
      : config_(std::move(config)), re_(std::move(re)) {}

  // The policy to set for a recommendation: itself unless refused, then
  // its replacement; kUnknown when none is left.
  static model::Iopolicy Target(model::Iopolicy recommended,
                                const SubsystemState& st);

  IopolicyActuatorConfig config_;
  std::regex re_;
  std::map<std::string, SubsystemState, std::less<>> state_;
};

// The figures behind a recommendation for subsystem `s`: each of its heads'
// latency imbalance and its paths' read latency EWMAs, e.g.
// "nvme0n1: imbalance 25.31, nvme0c0n1 31.20 ms, nvme0c1n1 1.23 ms".
std::string Figures(const model::Topology& topo, const model::Scoring& scoring,
                    absl::string_view s);

}  // namespace pathwise::control

#endif  // PATHWISE_CONTROL_IOPOLICY_DECIDER_H_

// SPDX-License-Identifier: Apache-2.0
#include "control/iopolicy_decider.h"

#include <cstdio>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "exporters/labels.h"

namespace pathwise::control {
namespace {

// std::regex reports a bad pattern by throwing; nothing else here throws.
std::optional<std::regex> Compile(const std::string& regex,
                                  std::string* problem) {
  try {
    return std::regex(regex, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    *problem = e.what();
    return std::nullopt;
  }
}

std::string Name(model::Iopolicy p) {
  return std::string(exporters::IopolicyLabel(p));
}

}  // namespace

std::string SubsystemRegexProblem(const std::string& regex) {
  std::string problem;
  Compile(regex, &problem);
  return problem;
}

absl::StatusOr<IopolicyDecider> IopolicyDecider::Create(
    IopolicyActuatorConfig config) {
  std::string problem;
  std::optional<std::regex> re = Compile(config.subsystems, &problem);
  if (!re) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad subsystem regex \"", config.subsystems, "\": ", problem));
  }
  return IopolicyDecider(std::move(config), *std::move(re));
}

bool IopolicyDecider::InScope(const model::Subsystem& s) const {
  return std::regex_match(s.name, re_) ||
         (!s.nqn.empty() && std::regex_match(s.nqn, re_));
}

model::Iopolicy IopolicyDecider::Target(model::Iopolicy recommended,
                                        const SubsystemState& st) {
  model::Iopolicy p = recommended;
  if (st.refused.contains(p) && p == model::Iopolicy::kQueueDepth) {
    p = model::Iopolicy::kRoundRobin;
  }
  return st.refused.contains(p) ? model::Iopolicy::kUnknown : p;
}

std::optional<IopolicyPlan> IopolicyDecider::Plan(const model::Subsystem& s,
                                                  const model::Scoring* scoring,
                                                  absl::Time now) {
  if (config_.mode == model::ActuateMode::kOff || !InScope(s)) {
    return std::nullopt;
  }
  SubsystemState& st = state_[s.name];
  const model::IopolicyRecommendation* rec = nullptr;
  if (scoring != nullptr) {
    auto it = scoring->iopolicy_recommended.find(s.name);
    if (it != scoring->iopolicy_recommended.end()) rec = &it->second;
  }
  // Nothing to act on: no advice, or a policy pathwise does not know on
  // either side (the subsystem's own is left as the kernel has it).
  if (rec == nullptr || rec->iopolicy == model::Iopolicy::kUnknown ||
      s.iopolicy == model::Iopolicy::kUnknown) {
    st.pending = model::Iopolicy::kUnknown;
    st.decided_for = model::Iopolicy::kUnknown;
    return std::nullopt;
  }
  // A recommendation other than the one a decision was made for: it may
  // be decided again (and the one before, should it come back).
  if (rec->iopolicy != st.decided_for)
    st.decided_for = model::Iopolicy::kUnknown;
  const model::Iopolicy target = Target(rec->iopolicy, st);
  if (target == model::Iopolicy::kUnknown || target == s.iopolicy) {
    // Nothing to change: the hold counts only while a change is wanted.
    st.pending = model::Iopolicy::kUnknown;
    return std::nullopt;
  }
  if (st.decided_for == rec->iopolicy) return std::nullopt;
  if (rec->iopolicy != st.pending || s.iopolicy != st.pending_from) {
    st.pending = rec->iopolicy;
    st.pending_from = s.iopolicy;
    st.pending_since = now;
  }
  const absl::Duration held = now - st.pending_since;
  if (held < config_.hold) return std::nullopt;
  if (now - st.last_attempt < config_.min_interval) return std::nullopt;
  char held_s[32];
  std::snprintf(held_s, sizeof(held_s), "%.1f", absl::ToDoubleSeconds(held));
  std::string reason =
      absl::StrCat("advised ", Name(rec->iopolicy), " for ", held_s, "s (hold ",
                   absl::FormatDuration(config_.hold), "): ", rec->reason);
  if (target != rec->iopolicy) {
    absl::StrAppend(&reason, "; the kernel refused ", Name(rec->iopolicy),
                    ", so ", Name(target));
  }
  return IopolicyPlan{s.name, s.iopolicy,   target, std::move(reason),
                      false,  rec->iopolicy};
}

void IopolicyDecider::Record(const IopolicyPlan& plan,
                             model::DecisionResult result, absl::Time now) {
  SubsystemState& st = state_[plan.subsystem];
  if (plan.restore) {
    if (result == model::DecisionResult::kApplied) st.written = plan.to;
    return;
  }
  switch (result) {
    case model::DecisionResult::kRefused:
      // Not a change and not an attempt that counts against min_interval:
      // the replacement policy may be planned at once.
      st.refused.insert(plan.to);
      return;
    case model::DecisionResult::kApplied:
      if (st.found == model::Iopolicy::kUnknown) st.found = plan.from;
      st.written = plan.to;
      break;
    case model::DecisionResult::kDryRun:
    case model::DecisionResult::kFailed:
      break;
  }
  st.decided_for = plan.advised;
  st.last_attempt = now;
}

std::vector<IopolicyPlan> IopolicyDecider::RestorePlans() const {
  std::vector<IopolicyPlan> plans;
  for (const auto& [name, st] : state_) {
    if (st.found == model::Iopolicy::kUnknown || st.written == st.found) {
      continue;
    }
    plans.push_back({name, st.written, st.found,
                     absl::StrCat("restore on exit: ", Name(st.found),
                                  " is what pathwise found"),
                     true});
  }
  return plans;
}

bool IopolicyDecider::Refused(absl::string_view s, model::Iopolicy p) const {
  auto it = state_.find(s);
  return it != state_.end() && it->second.refused.contains(p);
}

std::string Figures(const model::Topology& topo, const model::Scoring& scoring,
                    absl::string_view s) {
  std::string out;
  for (const model::Head& h : topo.heads) {
    if (h.subsystem != s) continue;
    if (!out.empty()) out += "; ";
    absl::StrAppend(&out, h.name, ":");
    auto hs = scoring.heads.find(h.name);
    if (hs != scoring.heads.end() && hs->second.latency_imbalance_ratio) {
      char buf[32];
      std::snprintf(buf, sizeof(buf), " imbalance %.2f,",
                    *hs->second.latency_imbalance_ratio);
      out += buf;
    }
    for (const model::Path& p : topo.paths) {
      if (p.head != h.name) continue;
      auto ps = scoring.paths.find(p.name);
      const std::optional<double>* ewma =
          ps == scoring.paths.end()
              ? nullptr
              : &ps->second
                     .latency_ewma_seconds[model::Index(model::OpGroup::kRead)];
      if (ewma != nullptr && ewma->has_value()) {
        char buf[48];
        std::snprintf(buf, sizeof(buf), " %.2f ms", **ewma * 1e3);
        absl::StrAppend(&out, " ", p.name, buf, " ",
                        exporters::PathHealthLabel(ps->second.health), ",");
      } else {
        absl::StrAppend(&out, " ", p.name, " no read EWMA,");
      }
    }
    if (!out.empty() && out.back() == ',') out.pop_back();
  }
  return out;
}

}  // namespace pathwise::control

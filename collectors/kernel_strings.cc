// SPDX-License-Identifier: Apache-2.0
#include "collectors/kernel_strings.h"

#include <string>

#include "absl/strings/match.h"

namespace pathwise::collectors {

std::optional<model::AnaState> ParseAnaState(absl::string_view s) {
  using A = model::AnaState;
  if (s == "optimized") return A::kOptimized;
  if (s == "non-optimized") return A::kNonOptimized;
  if (s == "inaccessible") return A::kInaccessible;
  if (s == "persistent-loss") return A::kPersistentLoss;
  if (s == "change") return A::kChange;
  return std::nullopt;
}

std::optional<model::ControllerState> ParseControllerState(
    absl::string_view s) {
  using C = model::ControllerState;
  if (s == "live") return C::kLive;
  if (s == "connecting") return C::kConnecting;
  if (s == "resetting") return C::kResetting;
  if (s == "deleting (no IO)") return C::kDeletingNoIo;
  // "deleting" and any spelling a kernel adds to it (as "(no IO)" was).
  if (absl::StartsWith(s, "deleting")) return C::kDeleting;
  if (s == "dead") return C::kDead;
  if (s == "new") return C::kNew;
  return std::nullopt;
}

std::optional<model::Iopolicy> ParseIopolicy(absl::string_view s) {
  using P = model::Iopolicy;
  if (s == "numa") return P::kNuma;
  if (s == "round-robin") return P::kRoundRobin;
  if (s == "queue-depth") return P::kQueueDepth;
  return std::nullopt;
}

void SetAnaState(absl::string_view kernel, model::Path& path) {
  const std::optional<model::AnaState> s = ParseAnaState(kernel);
  path.ana_state = s.value_or(model::AnaState::kUnknown);
  path.unknown_ana_state = s ? std::string() : std::string(kernel);
}

void SetControllerState(absl::string_view kernel, model::Controller& ctrl) {
  const std::optional<model::ControllerState> s = ParseControllerState(kernel);
  ctrl.state = s.value_or(model::ControllerState::kUnknown);
  ctrl.unknown_state = s ? std::string() : std::string(kernel);
}

void SetIopolicy(absl::string_view kernel, model::Subsystem& sub) {
  const std::optional<model::Iopolicy> p = ParseIopolicy(kernel);
  sub.iopolicy = p.value_or(model::Iopolicy::kUnknown);
  sub.unknown_iopolicy = p ? std::string() : std::string(kernel);
}

}  // namespace pathwise::collectors

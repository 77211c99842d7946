// SPDX-License-Identifier: Apache-2.0
#include "lab/scenario_event.h"

#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "collectors/kernel_strings.h"
#include "lab/units.h"

namespace pathwise::lab {

bool ParseAna(absl::string_view s, model::AnaState* out) {
  std::optional<model::AnaState> a = collectors::ParseAnaState(s);
  if (!a) return false;
  *out = *a;
  return true;
}

absl::Status ParseEventLine(absl::string_view line, std::string* path,
                            Event* event) {
  std::vector<absl::string_view> w =
      absl::StrSplit(line, ' ', absl::SkipWhitespace());
  if (w.size() < 3) {
    return absl::InvalidArgumentError(
        "want TIME PATH delay D | loss P | down | up | ana STATE");
  }
  *path = std::string(w[1]);
  absl::StatusOr<int64_t> at = ParseDuration(w[0]);
  if (!at.ok()) return at.status();
  event->at_ns = *at;
  const absl::string_view action = w[2];
  if (action != "delay" && action != "loss" && action != "down" &&
      action != "up" && action != "ana") {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown event '", action, "' (want delay, loss, down, up or ana)"));
  }
  const size_t want = (action == "down" || action == "up") ? 3 : 4;
  if (w.size() != want) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", action, "' takes ", want - 3, " argument(s)"));
  }
  if (action == "delay") {
    event->kind = EventKind::kDelay;
    absl::StatusOr<int64_t> d = ParseDuration(w[3]);
    if (!d.ok()) return d.status();
    event->delay_ns = *d;
  } else if (action == "loss") {
    event->kind = EventKind::kLoss;
    absl::StatusOr<double> f = ParseFraction(w[3]);
    if (!f.ok()) return f.status();
    if (*f >= 1) return BadValue("loss (must be < 100%)", w[3]);
    event->loss = *f;
  } else if (action == "down") {
    event->kind = EventKind::kDown;
  } else if (action == "up") {
    event->kind = EventKind::kUp;
  } else {  // ana, the last of the actions checked above
    event->kind = EventKind::kAna;
    if (!ParseAna(w[3], &event->ana)) return BadValue("ANA state", w[3]);
  }
  return absl::OkStatus();
}

}  // namespace pathwise::lab

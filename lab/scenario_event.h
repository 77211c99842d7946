// SPDX-License-Identifier: Apache-2.0
// The grammar of a scenario's [events] lines and of ANA states, apart from
// the parser's sections and keys (scenario.cc).
#ifndef PATHWISE_LAB_SCENARIO_EVENT_H_
#define PATHWISE_LAB_SCENARIO_EVENT_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "lab/scenario.h"
#include "model/types.h"

namespace pathwise::lab {

// An ANA state as the kernel spells it (the scenario speaks sysfs's
// language).
bool ParseAna(absl::string_view s, model::AnaState* out);

// TIME PATH delay DURATION | loss FRACTION | down | up | ana STATE: sets
// `*path` to PATH's name and `*event` to the rest (its path index is left
// to the caller, which knows the paths).
absl::Status ParseEventLine(absl::string_view line, std::string* path,
                            Event* event);

}  // namespace pathwise::lab

#endif  // PATHWISE_LAB_SCENARIO_EVENT_H_

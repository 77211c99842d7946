// SPDX-License-Identifier: Apache-2.0
// The kernel's spelling of states and policies in sysfs, parsed into the
// model's enums. The one place where a kernel string becomes an enum on the way
// in.
#ifndef PATHWISE_COLLECTORS_KERNEL_STRINGS_H_
#define PATHWISE_COLLECTORS_KERNEL_STRINGS_H_

#include <optional>

#include "absl/strings/string_view.h"
#include "model/topology.h"
#include "model/types.h"

namespace pathwise::collectors {

// /sys/block/nvmeXcYnZ/ana_state: "optimized", "non-optimized",
// "inaccessible", "persistent-loss", "change". nullopt otherwise.
std::optional<model::AnaState> ParseAnaState(absl::string_view kernel);

// /sys/class/nvme/nvmeX/state: "live", "connecting", "resetting",
// "deleting", "deleting (no IO)", "dead", "new". nullopt otherwise.
std::optional<model::ControllerState> ParseControllerState(
    absl::string_view kernel);

// /sys/class/nvme-subsystem/nvme-subsysX/iopolicy: "numa", "round-robin",
// "queue-depth". nullopt otherwise.
std::optional<model::Iopolicy> ParseIopolicy(absl::string_view kernel);

// Set the model's state from the kernel's string: the enum when known,
// else kUnknown with the string kept verbatim ("" stays "": not reported).
void SetAnaState(absl::string_view kernel, model::Path& path);
void SetControllerState(absl::string_view kernel, model::Controller& ctrl);
void SetIopolicy(absl::string_view kernel, model::Subsystem& sub);

}  // namespace pathwise::collectors

#endif  // PATHWISE_COLLECTORS_KERNEL_STRINGS_H_

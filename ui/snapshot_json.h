// SPDX-License-Identifier: Apache-2.0
// The snapshot as it comes back from the wire: GET /api/v1/snapshot (and
// `pathwise snapshot --format=json`) parsed into a model::Snapshot, so that
// a client computes rates and quantiles with the model's own types
// (model/delta.h, model/histogram.h). The inverse of
// exporters::SnapshotToJson: names are turned back into enums with the
// exporters' own spelling (exporters/labels.h) and, for the kernel's
// states, collectors/kernel_strings.h, which keeps an unknown state
// verbatim as the collectors do.
//
// What the document does not carry is left at its default: the actuator's
// mode and decision counts (only each subsystem's last decision is in it),
// the paths' sample age in the topology tree (it is in "scoring"). The
// userspace datapath's snapshot (`pathwise datapath`'s /api/v1/snapshot)
// also has "datapath", its selector's decisions: Snapshot::datapath.
#ifndef PATHWISE_UI_SNAPSHOT_JSON_H_
#define PATHWISE_UI_SNAPSHOT_JSON_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/topology.h"
#include "nlohmann/json.hpp"

namespace pathwise::ui {

// InvalidArgument when `j` is not a pathwise snapshot document (no
// "generation", "subsystems" and "io"), or a field has the wrong type, or
// the histogram layout differs from model::LatencyHistogram's (an agent of
// another build); the message names the field.
absl::StatusOr<model::Snapshot> SnapshotFromJson(const nlohmann::json& j);

// Parses `text` first; InvalidArgument when it is not JSON.
absl::StatusOr<model::Snapshot> SnapshotFromJsonText(absl::string_view text);

}  // namespace pathwise::ui

#endif  // PATHWISE_UI_SNAPSHOT_JSON_H_

// SPDX-License-Identifier: Apache-2.0
// The label values of the model's vocabulary (model/types.h), as the metric
// contract, the JSON and the text views spell them. The one place where an
// enum becomes a name on the way out.
#ifndef PATHWISE_EXPORTERS_LABELS_H_
#define PATHWISE_EXPORTERS_LABELS_H_

#include <array>

#include "absl/strings/string_view.h"
#include "model/queues.h"
#include "model/topology.h"
#include "model/types.h"

namespace pathwise::exporters {

// The `op` label.
constexpr absl::string_view OpLabel(model::Op op) {
  switch (op) {
    case model::Op::kRead:
      return "read";
    case model::Op::kWrite:
      return "write";
    case model::Op::kFlush:
      return "flush";
    case model::Op::kDiscard:
      return "discard";
    case model::Op::kPassthru:
      return "passthru";
    case model::Op::kOther:
      return "other";
  }
  return "other";
}

// The order in which a device's op series are published (the sysfs stat
// file's order first), kept stable for readers of the exposition.
inline constexpr std::array<model::Op, model::kOpCount> kOpExportOrder = {
    model::Op::kRead,  model::Op::kWrite,    model::Op::kDiscard,
    model::Op::kFlush, model::Op::kPassthru, model::Op::kOther};

// The `op_group` label and the JSON keys of per-group values.
constexpr absl::string_view OpGroupLabel(model::OpGroup g) {
  switch (g) {
    case model::OpGroup::kRead:
      return "read";
    case model::OpGroup::kWrite:
      return "write";
    case model::OpGroup::kOther:
      return "other";
  }
  return "other";
}

// The `state` of pathwise_path_health and the JSON/text health.
constexpr absl::string_view PathHealthLabel(model::PathHealth h) {
  switch (h) {
    case model::PathHealth::kHealthy:
      return "healthy";
    case model::PathHealth::kDegraded:
      return "degraded";
    case model::PathHealth::kFailed:
      return "failed";
    case model::PathHealth::kIdle:
      return "idle";
  }
  return "healthy";
}

// The `iopolicy` label: the kernel's spelling. "" for kUnknown.
constexpr absl::string_view IopolicyLabel(model::Iopolicy p) {
  switch (p) {
    case model::Iopolicy::kNuma:
      return "numa";
    case model::Iopolicy::kRoundRobin:
      return "round-robin";
    case model::Iopolicy::kQueueDepth:
      return "queue-depth";
    case model::Iopolicy::kUnknown:
      return "";
  }
  return "";
}

// The `mode` label of pathwise_actuator_mode: the --actuate value.
constexpr absl::string_view ActuateModeLabel(model::ActuateMode m) {
  switch (m) {
    case model::ActuateMode::kOff:
      return "off";
    case model::ActuateMode::kDryRun:
      return "dry-run";
    case model::ActuateMode::kOn:
      return "on";
  }
  return "off";
}

// The `result` label of pathwise_actuator_decisions_total.
constexpr absl::string_view DecisionResultLabel(model::DecisionResult r) {
  switch (r) {
    case model::DecisionResult::kApplied:
      return "applied";
    case model::DecisionResult::kDryRun:
      return "dry_run";
    case model::DecisionResult::kRefused:
      return "refused";
    case model::DecisionResult::kFailed:
      return "failed";
  }
  return "failed";
}

// The `state` of pathwise_path_ana_state: the kernel's spelling. "" for
// kUnknown.
constexpr absl::string_view AnaStateLabel(model::AnaState s) {
  switch (s) {
    case model::AnaState::kOptimized:
      return "optimized";
    case model::AnaState::kNonOptimized:
      return "non-optimized";
    case model::AnaState::kInaccessible:
      return "inaccessible";
    case model::AnaState::kPersistentLoss:
      return "persistent-loss";
    case model::AnaState::kChange:
      return "change";
    case model::AnaState::kUnknown:
      return "";
  }
  return "";
}

// A controller state as the kernel spells it ("deleting (no IO)" for
// kDeletingNoIo; the StateSet uses StateSetMember first). "" for kUnknown.
constexpr absl::string_view ControllerStateLabel(model::ControllerState s) {
  switch (s) {
    case model::ControllerState::kLive:
      return "live";
    case model::ControllerState::kConnecting:
      return "connecting";
    case model::ControllerState::kResetting:
      return "resetting";
    case model::ControllerState::kDeleting:
      return "deleting";
    case model::ControllerState::kDeletingNoIo:
      return "deleting (no IO)";
    case model::ControllerState::kDead:
      return "dead";
    case model::ControllerState::kNew:
      return "new";
    case model::ControllerState::kUnknown:
      return "";
  }
  return "";
}

// The `status_class` label.
constexpr absl::string_view NvmeStatusClassLabel(model::NvmeStatusClass c) {
  switch (c) {
    case model::NvmeStatusClass::kSuccess:
      return "success";
    case model::NvmeStatusClass::kGeneric:
      return "generic";
    case model::NvmeStatusClass::kCommandSpecific:
      return "command_specific";
    case model::NvmeStatusClass::kMedia:
      return "media";
    case model::NvmeStatusClass::kPath:
      return "path";
    case model::NvmeStatusClass::kVendor:
      return "vendor";
    case model::NvmeStatusClass::kReserved:
      return "reserved";
  }
  return "reserved";
}

// The `reason` of pathwise_bpf_events_dropped_total.
constexpr absl::string_view DropReasonLabel(model::DropReason r) {
  switch (r) {
    case model::DropReason::kStartMapFull:
      return "start_map_full";
    case model::DropReason::kNoStartTime:
      return "no_start_time";
    case model::DropReason::kIoMapFull:
      return "io_map_full";
    case model::DropReason::kPathMapFull:
      return "path_map_full";
    case model::DropReason::kRecursion:
      return "recursion";
    case model::DropReason::kStartCollision:
      return "start_collision";
  }
  return "unknown";
}

// The `reason` of pathwise_controller_probe_failures_total: timeout,
// transport, unavailable, or the NVMe status class as `status_class`
// spells it.
constexpr absl::string_view ProbeFailureLabel(model::ProbeFailure f) {
  switch (f) {
    case model::ProbeFailure::kTimeout:
      return "timeout";
    case model::ProbeFailure::kTransport:
      return "transport";
    case model::ProbeFailure::kUnavailable:
      return "unavailable";
    case model::ProbeFailure::kGeneric:
      return NvmeStatusClassLabel(model::NvmeStatusClass::kGeneric);
    case model::ProbeFailure::kCommandSpecific:
      return NvmeStatusClassLabel(model::NvmeStatusClass::kCommandSpecific);
    case model::ProbeFailure::kMedia:
      return NvmeStatusClassLabel(model::NvmeStatusClass::kMedia);
    case model::ProbeFailure::kPath:
      return NvmeStatusClassLabel(model::NvmeStatusClass::kPath);
    case model::ProbeFailure::kVendor:
      return NvmeStatusClassLabel(model::NvmeStatusClass::kVendor);
    case model::ProbeFailure::kReserved:
      return NvmeStatusClassLabel(model::NvmeStatusClass::kReserved);
  }
  return "unknown";
}

// The `source` label of pathwise_sampler_info; "" for kNone.
constexpr absl::string_view IoSourceLabel(model::IoSource s) {
  switch (s) {
    case model::IoSource::kSysfs:
      return "sysfs";
    case model::IoSource::kBpf:
      return "bpf";
    case model::IoSource::kNone:
      break;
  }
  return "";
}

// What the views show for a state that may be one the model does not know:
// the label of a known value, else the kernel's string verbatim ("" when
// nothing was reported).
inline absl::string_view AnaStateText(const model::Path& p) {
  return p.ana_state == model::AnaState::kUnknown ? p.unknown_ana_state
                                                  : AnaStateLabel(p.ana_state);
}
inline absl::string_view ControllerStateText(const model::Controller& c) {
  return c.state == model::ControllerState::kUnknown
             ? c.unknown_state
             : ControllerStateLabel(c.state);
}
inline absl::string_view IopolicyText(const model::Subsystem& s) {
  return s.iopolicy == model::Iopolicy::kUnknown ? s.unknown_iopolicy
                                                 : IopolicyLabel(s.iopolicy);
}
// The advisor's kUnknown means "keep the current policy, one pathwise does
// not know": the views show that policy, as the kernel spells it.
inline absl::string_view RecommendedIopolicyText(
    const model::IopolicyRecommendation& rec, const model::Subsystem& s) {
  return rec.iopolicy == model::Iopolicy::kUnknown
             ? IopolicyText(s)
             : IopolicyLabel(rec.iopolicy);
}

// Queues and flows (model/queues.h).
inline absl::string_view QueueMismatchLabel(model::QueueMismatchKind k) {
  switch (k) {
    case model::QueueMismatchKind::kRxIrqOffWorker:
      return "rx_irq_off_worker";
    case model::QueueMismatchKind::kSharedNicQueue:
      return "shared_nic_queue";
    case model::QueueMismatchKind::kOversubscribed:
      return "oversubscribed";
  }
  return "unknown";
}
inline absl::string_view NicDirectionLabel(model::NicDirection d) {
  return d == model::NicDirection::kTx ? "tx" : "rx";
}

// The state of pathwise_datapath_path_state and of the datapath's
// /api/v1/snapshot.
constexpr absl::string_view DatapathPathStateLabel(model::DatapathPathState s) {
  switch (s) {
    case model::DatapathPathState::kUsable:
      return "usable";
    case model::DatapathPathState::kFailed:
      return "failed";
    case model::DatapathPathState::kAnaUnusable:
      return "ana_unusable";
  }
  return "unknown";
}

}  // namespace pathwise::exporters

#endif  // PATHWISE_EXPORTERS_LABELS_H_

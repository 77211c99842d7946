// SPDX-License-Identifier: Apache-2.0
// What the actuators (control/) did, as the model carries it to the
// exporters: the configured mode, every decision counted by its labels, and
// each subsystem's last decision. Filled by the iopolicy actuator, attached
// to the next snapshot by the pipeline; no names here (exporters/labels.h
// spells them).
#ifndef PATHWISE_MODEL_ACTUATION_H_
#define PATHWISE_MODEL_ACTUATION_H_

#include <array>
#include <compare>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "absl/time/time.h"
#include "model/types.h"

namespace pathwise::model {

// --actuate: off (nothing is decided), dry-run (decided, logged and
// exported, nothing written), on (written to the kernel).
enum class ActuateMode : uint8_t { kOff, kDryRun, kOn };
inline constexpr std::array<ActuateMode, 3> kAllActuateModes = {
    ActuateMode::kOff, ActuateMode::kDryRun, ActuateMode::kOn};

// The outcome of one decision.
enum class DecisionResult : uint8_t {
  kApplied,  // written and read back
  kDryRun,   // decided, not written (--actuate=dry-run)
  kRefused,  // the kernel rejected the policy (EINVAL): it does not offer it
  kFailed,   // not written (no permission, read-only sysfs, ...) or the
             // read-back differed
};
inline constexpr std::array<DecisionResult, 4> kAllDecisionResults = {
    DecisionResult::kApplied, DecisionResult::kDryRun, DecisionResult::kRefused,
    DecisionResult::kFailed};

// One iopolicy decision for one subsystem.
struct IopolicyDecision {
  Iopolicy from = Iopolicy::kUnknown;
  Iopolicy to = Iopolicy::kUnknown;
  DecisionResult result = DecisionResult::kDryRun;
  // Why, with the figures behind it (the advisor's reason, how long it held,
  // the heads' latency EWMAs), or "restore on exit".
  std::string reason;
  std::string error;     // refused/failed: what went wrong; "" otherwise
  bool restore = false;  // undoing pathwise's change on exit
  absl::Time at = absl::InfinitePast();
};

// The labels of pathwise_actuator_decisions_total.
struct DecisionKey {
  std::string subsystem;
  Iopolicy from = Iopolicy::kUnknown;
  Iopolicy to = Iopolicy::kUnknown;
  DecisionResult result = DecisionResult::kDryRun;
  friend auto operator<=>(const DecisionKey&, const DecisionKey&) = default;
};

struct ActuatorReport {
  ActuateMode mode = ActuateMode::kOff;
  std::map<DecisionKey, uint64_t> decisions_total;
  // By subsystem name.
  std::map<std::string, IopolicyDecision, std::less<>> last_decision;
};

// --head-iostats: keep (each multipath head's kernel I/O accounting left as
// it is), dry-run (decided and logged, nothing written), off (the head's
// queue/iostats set to 0 while pathwise's BPF sampler counts its I/O, and
// set back when it stops or on exit).
enum class HeadIostatsMode : uint8_t { kKeep, kDryRun, kOff };

// The labels of pathwise_head_iostats_changes_total: turning a head's
// accounting off, or back on (`restore`), and the outcome (kApplied, kDryRun
// or kFailed).
struct HeadIostatsChange {
  bool restore = false;
  DecisionResult result = DecisionResult::kApplied;
  friend auto operator<=>(const HeadIostatsChange&,
                          const HeadIostatsChange&) = default;
};

struct HeadIostatsReport {
  HeadIostatsMode mode = HeadIostatsMode::kKeep;
  // Heads whose accounting pathwise holds off now (dry-run: would hold).
  uint64_t heads_off = 0;
  std::map<HeadIostatsChange, uint64_t> changes_total;
};

}  // namespace pathwise::model

#endif  // PATHWISE_MODEL_ACTUATION_H_

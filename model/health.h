// SPDX-License-Identifier: Apache-2.0
// The agent's health, as the agent computes it and exporters render it
// (/healthz): typed state, no transport.
#ifndef PATHWISE_MODEL_HEALTH_H_
#define PATHWISE_MODEL_HEALTH_H_

#include <string>
#include <vector>

#include "model/topology.h"

namespace pathwise::model {

struct Health {
  // A collection has succeeded (every stage reported success) at least once.
  bool ready = false;
  // Collections keep coming: the last is recent enough.
  bool live = false;
  // Why not ready or not live, one line; "" when both hold.
  std::string reason;
  // The stages of the latest collection; empty before the first.
  std::vector<CollectorResult> stages;
  // The latest collection's model::Presence notice: "" when there is
  // multipath to watch. Says why a healthy agent reports nothing.
  std::string notice;

  bool ok() const { return ready && live; }
};

}  // namespace pathwise::model

#endif  // PATHWISE_MODEL_HEALTH_H_

// SPDX-License-Identifier: Apache-2.0
#include "agent/agent.h"

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace pathwise::agent {

std::shared_ptr<const model::Snapshot> Agent::CollectOnce() {
  auto snap = std::make_shared<model::Snapshot>(pipeline_.Collect());
  snap->generation = ++generation_;
  snap->collected_at = absl::Now();
  if (previous_ != nullptr &&
      model::StructureDiffers(previous_->topology, snap->topology)) {
    ++topology_changes_;
  }
  snap->topology_changes_total = topology_changes_;
  if (snap->AllCollectorsSucceeded()) ever_succeeded_ = true;
  LogPresence(snap->topology);
  std::shared_ptr<const model::Snapshot> published = std::move(snap);
  store_.Publish(published);
  previous_ = published;
  pipeline_.Act(*published);
  return published;
}

void Agent::LogPresence(const model::Topology& topology) {
  const model::MultipathPresence p = model::Presence(topology);
  if (notice_ == p.notice) return;
  if (!p.notice.empty()) {
    spdlog::warn("{}", p.notice);
  } else if (notice_.has_value()) {
    spdlog::info("NVMe multipath subsystems found: {} of {}",
                 p.multipath_subsystems, p.subsystems);
  }
  notice_ = p.notice;
}

void Agent::Shutdown() {
  model::Snapshot last = previous_ != nullptr ? *previous_ : model::Snapshot{};
  if (!pipeline_.Stop(last) || previous_ == nullptr) return;
  last.generation = ++generation_;
  last.collected_at = absl::Now();
  auto published = std::make_shared<const model::Snapshot>(std::move(last));
  store_.Publish(published);
  previous_ = std::move(published);
}

model::Health Agent::Health() const {
  model::Health h;
  std::shared_ptr<const model::Snapshot> snap = store_.Load();
  if (snap == nullptr) {
    h.reason = "not ready: no collection yet";
    return h;
  }
  h.stages = snap->collectors;
  h.notice = model::Presence(snap->topology).notice;
  h.ready = ever_succeeded_;
  const absl::Duration age = absl::Now() - snap->collected_at;
  h.live = age <= 3 * interval_ + absl::Seconds(5);
  if (!h.ready) {
    h.reason = "not ready: no collection has succeeded yet";
  } else if (!h.live) {
    h.reason = absl::StrCat("unhealthy: last collection ",
                            absl::FormatDuration(age), " ago");
  }
  return h;
}

}  // namespace pathwise::agent

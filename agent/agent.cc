#include "agent/agent.h"

#include "absl/strings/str_cat.h"

namespace pathwise::agent {

std::shared_ptr<const model::Snapshot> Agent::CollectOnce() {
  auto snap = std::make_shared<model::Snapshot>();
  registry_.CollectAll(*snap);
  snap->generation = ++generation_;
  snap->collected_at = absl::Now();
  if (previous_ != nullptr &&
      model::StructureDiffers(previous_->topology, snap->topology)) {
    ++topology_changes_;
  }
  snap->topology_changes_total = topology_changes_;
  if (snap->AllCollectorsSucceeded()) ever_succeeded_ = true;
  std::shared_ptr<const model::Snapshot> published = std::move(snap);
  store_.Publish(published);
  previous_ = published;
  return published;
}

exporters::HttpResponse Agent::Healthz() const {
  std::shared_ptr<const model::Snapshot> snap = store_.Load();
  if (snap == nullptr)
    return {503, "text/plain; charset=utf-8", "not ready: no collection yet\n"};
  std::string body;
  for (const model::CollectorResult& r : snap->collectors) {
    absl::StrAppend(&body, "collector ", r.name, ": ",
                    r.success ? "ok" : absl::StrCat("failed: ", r.error), "\n");
  }
  if (!ever_succeeded_) {
    return {503, "text/plain; charset=utf-8",
            "not ready: no collection has succeeded yet\n" + body};
  }
  const absl::Duration age = absl::Now() - snap->collected_at;
  if (age > 3 * interval_ + absl::Seconds(5)) {
    return {503, "text/plain; charset=utf-8",
            absl::StrCat("unhealthy: last collection ",
                         absl::FormatDuration(age), " ago\n", body)};
  }
  return {200, "text/plain; charset=utf-8", "ok\n" + body};
}

}  // namespace pathwise::agent

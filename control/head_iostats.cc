// SPDX-License-Identifier: Apache-2.0
#include "control/head_iostats.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace pathwise::control {
namespace {

using model::DecisionResult;
using model::HeadIostatsMode;

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

}  // namespace

bool SamplerCountsHeads(const model::Snapshot& snap) {
  if (snap.io_source != model::IoSource::kBpf) return false;
  for (const model::CollectorResult& c : snap.collectors) {
    if (c.name == "bpf_io") return c.success;
  }
  return false;
}

HeadIostatsSwitch::HeadIostatsSwitch(HeadIostatsConfig config,
                                     std::unique_ptr<AttrIo> io)
    : config_(std::move(config)), io_(std::move(io)) {
  report_.mode = config_.mode;
}

std::string HeadIostatsSwitch::PathOf(absl::string_view head) const {
  return absl::StrCat(config_.sysfs_root, "/block/", head, "/queue/iostats");
}

void HeadIostatsSwitch::Count(bool restore, DecisionResult result) {
  ++report_.changes_total[{.restore = restore, .result = result}];
}

void HeadIostatsSwitch::Act(const model::Snapshot& published) {
  if (stopped_ || config_.mode == HeadIostatsMode::kKeep) return;
  // A head whose attribute is gone (its namespace detached) has nothing to
  // restore. A head only missing from this snapshot (a failed topology
  // read) is kept.
  for (auto it = off_.begin(); it != off_.end();) {
    if (!Exists(PathOf(*it))) {
      spdlog::info("head iostats: {} is gone; nothing to turn back on", *it);
      it = off_.erase(it);
    } else {
      ++it;
    }
  }
  if (!SamplerCountsHeads(published)) {
    const std::string why =
        published.io_source == model::IoSource::kBpf
            ? "the eBPF sampler failed this collection"
            : "the heads' I/O is not collected by the eBPF sampler (the "
              "sysfs counters read the heads' stat)";
    if (off_.empty() && !said_kept_) {
      spdlog::warn("head iostats: the heads keep their accounting: {}", why);
    }
    said_kept_ = true;
    while (!off_.empty()) Restore(*off_.begin(), why);
    return;
  }
  said_kept_ = false;
  for (const model::Head& h : published.topology.heads) {
    if (off_.contains(h.name) || left_alone_.contains(h.name)) continue;
    TurnOff(h.name);
  }
}

std::string HeadIostatsSwitch::WriteAndReadBack(const std::string& path,
                                                absl::string_view value) {
  if (absl::Status s = io_->Write(path, value); !s.ok()) {
    return std::string(s.message());
  }
  absl::StatusOr<std::string> back = io_->Read(path);
  if (!back.ok()) return std::string(back.status().message());
  return *back == value ? "" : absl::StrCat("read back ", *back);
}

void HeadIostatsSwitch::TurnOff(const std::string& head) {
  const std::string path = PathOf(head);
  absl::StatusOr<std::string> now = io_->Read(path);
  if (!now.ok()) {
    // No attribute (a test tree, an old kernel): nothing to switch.
    spdlog::warn("head iostats: {} left as it is: {}", head,
                 std::string(now.status().message()));
    left_alone_.insert(head);
    return;
  }
  if (*now != "1") {
    spdlog::info(
        "head iostats: {} already has iostats {}; left as it is (not "
        "pathwise's to restore)",
        head, *now);
    left_alone_.insert(head);
    return;
  }
  if (config_.mode == HeadIostatsMode::kDryRun) {
    spdlog::info(
        "head iostats: dry run: would write 0 to {} (the eBPF sampler "
        "counts every I/O of {})",
        path, head);
    off_.insert(head);
    Count(false, DecisionResult::kDryRun);
    return;
  }
  const std::string why = WriteAndReadBack(path, "0");
  if (why.empty()) {
    spdlog::info(
        "head iostats: {} off (wrote 0 to {}): the eBPF sampler counts every "
        "I/O of it; the kernel's {}/block/{}/stat stops moving",
        head, path, config_.sysfs_root, head);
    off_.insert(head);
    Count(false, DecisionResult::kApplied);
    return;
  }
  // Not retried: one failure, one log line and one count, not one per
  // interval.
  spdlog::warn("head iostats: could not turn {} off: {}; left as it is", head,
               why);
  left_alone_.insert(head);
  Count(false, DecisionResult::kFailed);
}

void HeadIostatsSwitch::Restore(std::string head, absl::string_view why) {
  off_.erase(head);
  const std::string path = PathOf(head);
  if (config_.mode == HeadIostatsMode::kDryRun) {
    spdlog::info("head iostats: dry run: would write 1 to {} ({})", path,
                 std::string(why));
    Count(true, DecisionResult::kDryRun);
    return;
  }
  absl::StatusOr<std::string> now = io_->Read(path);
  if (now.ok() && *now != "0") {
    spdlog::warn(
        "head iostats: {} was set to {} by someone else since; left as it is",
        head, *now);
    left_alone_.insert(head);
    return;
  }
  const std::string error = WriteAndReadBack(path, "1");
  if (error.empty()) {
    spdlog::info("head iostats: {} on again (wrote 1 to {}): {}", head, path,
                 std::string(why));
    Count(true, DecisionResult::kApplied);
    return;
  }
  spdlog::error(
      "head iostats: could not turn {} back on ({}): {}; the kernel no longer "
      "accounts its I/O until `echo 1 > {}`",
      head, std::string(why), error, path);
  Count(true, DecisionResult::kFailed);
}

void HeadIostatsSwitch::Stop() {
  if (stopped_) return;
  stopped_ = true;
  while (!off_.empty()) Restore(*off_.begin(), "pathwise is stopping");
}

model::HeadIostatsReport HeadIostatsSwitch::Report() const {
  model::HeadIostatsReport r = report_;
  r.heads_off = off_.size();
  return r;
}

}  // namespace pathwise::control

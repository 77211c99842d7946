// SPDX-License-Identifier: Apache-2.0
// The head iostats switch (--head-iostats): the kernel accounts each I/O of
// a multipath namespace twice, at the head (nvme0n1) and at the path
// (nvme0c0n1), and the head's accounting costs IOPS. While pathwise's BPF
// sampler counts every I/O of every head exactly (the merge of its paths),
// the switch sets each head's queue/iostats to 0; when the sampler stops
// or is not what collects (the sysfs fallback reads the head's own
// counters), and on exit, it sets back to 1 each head it turned off. A head
// found off already is someone else's choice and left alone; one turned
// back on by someone else is theirs from then on.
//
// What turning it off loses: the head's /sys/block/<head>/stat and its
// /proc/diskstats line stop moving, so iostat, node_exporter's diskstats
// and anything else that reads them see the head idle; pathwise's own head
// series do not change.
//
// Every change is one log line and counted (pathwise_head_iostats_*).
// Not thread-safe: the collection loop drives it, and the shutdown path
// calls Stop() once that loop has ended.
#ifndef PATHWISE_CONTROL_HEAD_IOSTATS_H_
#define PATHWISE_CONTROL_HEAD_IOSTATS_H_

#include <memory>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "control/sysfs_attr.h"
#include "model/actuation.h"
#include "model/topology.h"

namespace pathwise::control {

struct HeadIostatsConfig {
  model::HeadIostatsMode mode = model::HeadIostatsMode::kKeep;
  std::string sysfs_root = "/sys";
};

// How the switch reads and writes an attribute: sysfs, or a test's fake
// (a refused write cannot be made in a temporary tree as root).
class AttrIo {
 public:
  virtual ~AttrIo() = default;
  virtual absl::StatusOr<std::string> Read(const std::string& path) {
    return ReadSysfsAttr(path);
  }
  virtual absl::Status Write(const std::string& path, absl::string_view v) {
    return WriteSysfsAttr(path, v);
  }
};

class HeadIostatsSwitch {
 public:
  explicit HeadIostatsSwitch(
      HeadIostatsConfig config,
      std::unique_ptr<AttrIo> io = std::make_unique<AttrIo>());

  absl::string_view name() const { return "head_iostats"; }

  // After each published snapshot: heads off while its I/O came from the
  // BPF sampler and the sampler succeeded, else back on.
  void Act(const model::Snapshot& published);

  // On exit: every head turned off is turned back on. Act does nothing
  // afterwards.
  void Stop();

  model::HeadIostatsReport Report() const;

  // <sysfs_root>/block/<head>/queue/iostats
  std::string PathOf(absl::string_view head) const;

 private:
  void TurnOff(const std::string& head);
  // By value: callers pass an element of off_, which this erases.
  void Restore(std::string head, absl::string_view why);
  void Count(bool restore, model::DecisionResult result);
  // Writes `value` and reads it back: "" when it reads back, else why not.
  std::string WriteAndReadBack(const std::string& path,
                               absl::string_view value);

  HeadIostatsConfig config_;
  std::unique_ptr<AttrIo> io_;
  std::set<std::string, std::less<>> off_;  // turned off (dry-run: would be)
  // Found off already, or whose change failed: not touched again.
  std::set<std::string, std::less<>> left_alone_;
  model::HeadIostatsReport report_;
  bool stopped_ = false;
  bool said_kept_ = false;  // logged once per stretch without the sampler
};

// Whether the snapshot's head I/O came from the BPF sampler, which
// succeeded in this collection.
bool SamplerCountsHeads(const model::Snapshot& snap);

}  // namespace pathwise::control

#endif  // PATHWISE_CONTROL_HEAD_IOSTATS_H_

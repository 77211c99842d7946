// SPDX-License-Identifier: Apache-2.0
// Scripted pipeline stages for the agent tests: a topology source and I/O
// sources that replay steps and record the order they ran in.
#ifndef PATHWISE_TESTS_UNIT_AGENT_FAKE_STAGES_H_
#define PATHWISE_TESTS_UNIT_AGENT_FAKE_STAGES_H_

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "collectors/collector.h"
#include "model/synthetic.h"

namespace pathwise::testing {

inline model::Topology SyntheticTopology(int controllers) {
  return model::MakeSyntheticSnapshot(
             {.controllers_per_subsystem = controllers})
      .topology;
}

// One step of a scripted stage: what it produces, what it returns, or that
// it throws.
struct TopologyStep {
  model::Topology topology;
  absl::Status status;
  bool throws = false;
};

class ScriptedTopology : public collectors::TopologySource {
 public:
  ScriptedTopology(std::vector<TopologyStep> steps,
                   std::vector<std::string>* trace = nullptr)
      : steps_(std::move(steps)), trace_(trace) {}
  absl::string_view name() const override { return "scripted"; }
  absl::Status Read(model::Topology& topology) override {
    if (trace_ != nullptr) trace_->push_back("scripted");
    const TopologyStep& step = steps_[std::min(i_++, steps_.size() - 1)];
    if (step.throws) throw std::runtime_error("boom");
    topology = step.topology;
    return step.status;
  }

 private:
  std::vector<TopologyStep> steps_;
  std::vector<std::string>* trace_;
  size_t i_ = 0;
};

// Adds `reads_per_call` reads of 1 ms to every path of the topology it is
// given (cumulative over calls) and records how many paths it saw.
class CountingIo : public collectors::IoSource {
 public:
  CountingIo(std::string name, std::vector<std::string>* trace,
             absl::Status status = absl::OkStatus(), uint64_t reads = 100)
      : name_(std::move(name)),
        trace_(trace),
        status_(std::move(status)),
        reads_(reads) {}
  absl::string_view name() const override { return name_; }
  absl::Status Read(const model::Topology& topology,
                    model::IoReading& io) override {
    if (trace_ != nullptr) trace_->push_back(name_);
    paths_seen_ = topology.paths.size();
    total_ += reads_;
    for (const model::Path& p : topology.paths) {
      model::OpStats& r = io.path_io[p.name].op(model::Op::kRead).emplace();
      r.completed = total_;
      r.time_ns = total_ * 1000000;
    }
    io.io_source = model::IoSource::kSysfs;
    return status_;
  }
  size_t paths_seen() const { return paths_seen_; }

 private:
  std::string name_;
  std::vector<std::string>* trace_;
  absl::Status status_;
  uint64_t reads_;
  uint64_t total_ = 0;
  size_t paths_seen_ = 0;
};

}  // namespace pathwise::testing

#endif  // PATHWISE_TESTS_UNIT_AGENT_FAKE_STAGES_H_

// SPDX-License-Identifier: Apache-2.0
// An independent witness of a device's request completions for the host
// tests: a private tracefs instance recording block:block_rq_complete for one
// device with the tgid of the task each completion ran on. The tests use it
// to tell the completions the kernel hid from pathwise (those handled while a
// thread of PID 1 was current, on kernels that skip BPF programs there) from
// a real loss. Optionally it also records block:block_getrq, which fires on
// the CPU that has just taken the request from its software queue
// (rq->mq_ctx), and pairs each completion with it by sector: the CPU columns
// of the pair tell a remote completion from a local one.
#ifndef PATHWISE_TESTS_BPF_COMPLETION_TRACE_H_
#define PATHWISE_TESTS_BPF_COMPLETION_TRACE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace pathwise::bpf {

struct CompletionCounts {
  uint64_t total = 0;    // completion events recorded for the device
  uint64_t in_init = 0;  // ... that ran while a thread of PID 1 was current
  uint64_t unknown_tgid = 0;  // ... whose tgid tracefs did not know
  bool overrun = false;       // the instance's buffer lost events
  // With submit CPUs (Start's with_submit_cpu):
  uint64_t remote = 0;  // completions on another CPU than their block_getrq
  uint64_t remote_in_init = 0;  // ... of those, ran while PID 1 was current
  uint64_t unpaired = 0;  // completions with no block_getrq for their sector
};

class CompletionTrace {
 public:
  // Starts recording completions of `kernel_dev` (major << 20 | minor).
  // Mounts tracefs at /sys/kernel/tracing if it is not mounted (and unmounts
  // it again when done). Needs root. `with_submit_cpu` also records
  // block_getrq, pairs it with the completion of the same sector (each
  // sector one request at a time, requests completing in one piece) and
  // counts the pairs whose CPUs differ; the instance then uses the global
  // trace clock, so that a pair's order holds across CPUs.
  static absl::StatusOr<std::unique_ptr<CompletionTrace>> Start(
      uint32_t kernel_dev, bool with_submit_cpu = false);
  ~CompletionTrace();
  CompletionTrace(const CompletionTrace&) = delete;
  CompletionTrace& operator=(const CompletionTrace&) = delete;

  // Stops recording and counts what was recorded.
  absl::StatusOr<CompletionCounts> Stop();

 private:
  CompletionTrace() = default;
  std::string instance_;
  bool with_submit_cpu_ = false;
  bool mounted_here_ = false;
  bool stopped_ = false;
};

}  // namespace pathwise::bpf

#endif  // PATHWISE_TESTS_BPF_COMPLETION_TRACE_H_

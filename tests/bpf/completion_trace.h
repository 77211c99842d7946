// An independent witness of a device's request completions for the host
// tests: a private tracefs instance recording block:block_rq_complete for one
// device with the tgid of the task each completion ran on. The tests use it
// to tell the completions the kernel hid from pathwise (those handled while a
// thread of PID 1 was current, on kernels that skip BPF programs there) from
// a real loss.
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
};

class CompletionTrace {
 public:
  // Starts recording completions of `kernel_dev` (major << 20 | minor).
  // Mounts tracefs at /sys/kernel/tracing if it is not mounted (and unmounts
  // it again when done). Needs root.
  static absl::StatusOr<std::unique_ptr<CompletionTrace>> Start(
      uint32_t kernel_dev);
  ~CompletionTrace();
  CompletionTrace(const CompletionTrace&) = delete;
  CompletionTrace& operator=(const CompletionTrace&) = delete;

  // Stops recording and counts what was recorded.
  absl::StatusOr<CompletionCounts> Stop();

 private:
  CompletionTrace() = default;
  std::string instance_;
  bool mounted_here_ = false;
  bool stopped_ = false;
};

}  // namespace pathwise::bpf

#endif  // PATHWISE_TESTS_BPF_COMPLETION_TRACE_H_

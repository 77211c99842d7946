// Command line of the `pathwise` binary: subcommands and absl flags.
//
// absl 20220623's ParseCommandLine() exits 1 and may print several lines on a
// bad flag; the contract is exit 2 with one line. So the arguments are
// matched here and every value is parsed by the absl flag itself
// (CommandLineFlag::ParseFrom), keeping absl's types and messages.
#ifndef PATHWISE_AGENT_CLI_H_
#define PATHWISE_AGENT_CLI_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "scoring/scoring.h"

namespace pathwise::agent {

enum class Command { kServe, kSnapshot, kTopology, kHelp, kVersion };

enum class BpfMode { kAuto, kRequired, kOff };

struct Options {
  Command command = Command::kServe;
  std::string listen_address;
  absl::Duration interval;
  std::string sysfs_root;
  BpfMode bpf = BpfMode::kAuto;
  bool bpf_stats = false;        // hold BPF_ENABLE_STATS while running
  std::string devices = "nvme";  // nvme | all (BPF sampler only)
  absl::Duration duration;
  std::string format;  // resolved per command: prometheus|json|text
  std::string log_level;
  // Path scoring (--ewma_shift, --degraded_ratio, --degraded_windows,
  // --idle_windows, --recover_windows, --reseed_ratio).
  scoring::Config scoring;
};

// Parses argv (argv[0] excluded). The error message is a single line.
absl::StatusOr<Options> ParseArgs(const std::vector<std::string>& args);

std::string HelpText();

// absl flag (un)parsing for BpfMode.
bool AbslParseFlag(absl::string_view text, BpfMode* mode, std::string* error);
std::string AbslUnparseFlag(BpfMode mode);

}  // namespace pathwise::agent

#endif  // PATHWISE_AGENT_CLI_H_

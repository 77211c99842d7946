// `pathwise lab`: parses its own flags and runs a scenario under each policy.
//
//   pathwise lab --scenario FILE [--policies LIST] [--seed N]
//                [--format table|csv|json] [--jobs N]
//
// Exit codes: 0 ok, 1 the scenario file cannot be read or parsed, 2 bad
// flags (one line on stderr, like the rest of the CLI).
#ifndef PATHWISE_LAB_LAB_CLI_H_
#define PATHWISE_LAB_LAB_CLI_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lab/scenario.h"
#include "lab/sim.h"

namespace pathwise::lab {

struct LabOptions {
  std::string scenario;
  std::vector<Policy> policies = AllPolicies();
  std::optional<uint64_t> seed;  // default: the scenario's
  std::string format = "table";
  int jobs = 0;  // threads; 0: one per core
  bool help = false;
};

// `args` excludes "pathwise" and "lab".
absl::StatusOr<LabOptions> ParseLabArgs(const std::vector<std::string>& args);
std::string LabHelpText();

// Every policy of `policies` on `sc`, in that order, on up to `jobs`
// threads. The result does not depend on `jobs`.
std::vector<PolicyResult> RunPolicies(const Scenario& sc,
                                      const std::vector<Policy>& policies,
                                      uint64_t seed, int jobs);

// The whole subcommand; returns the exit code.
int RunLab(const std::vector<std::string>& args, std::ostream& out,
           std::ostream& err);

}  // namespace pathwise::lab

#endif  // PATHWISE_LAB_LAB_CLI_H_

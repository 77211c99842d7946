// SPDX-License-Identifier: Apache-2.0
// `pathwise lab`: its flags and the run of a scenario under each policy.
//
//   pathwise lab --scenario FILE [--policies LIST] [--seed N]
//                [--format table|csv|json] [--jobs N] [--trace FILE]
//                [--plot FILE.svg]
//       the table (a table per phase too when scripted events split the
//       run), the verdict of lab/verdict.h, and with --plot throughput and
//       p99 per policy over time (lab/timeline_plot.h)
//   pathwise lab --generate N --out DIR [--seed S]
//       writes N scenarios drawn from the family of lab/generate.h as
//       DIR/gen-S-I.scn, one path per line on stdout
//   pathwise lab --league N [--seed S] [--policies LIST] [--jobs N]
//                [--format table|csv|json] [--plot FILE.svg] [--csv FILE]
//       runs N drawn scenarios under each policy and prints the league
//       table (lab/league.h), the losses and the selector's goals; exit 0
//       whether or not the goals are met (the table says)
//
// Lab owns its flags (AddLabFlags): the agent mounts them on its `lab`
// subcommand, pathwise_lab_tool on a CLI::App of its own, so both spell and
// check them alike.
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

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lab/scenario.h"
#include "lab/sim.h"

namespace CLI {
class App;
class ParseError;
}  // namespace CLI

namespace pathwise::lab {

class TraceRecorder;
class TimelineRecorder;

struct LabOptions {
  std::string scenario;
  std::vector<policy::Policy> policies = policy::AllPolicies();
  std::optional<uint64_t> seed;  // default: the scenario's
  std::string format = "table";
  int jobs = 0;         // threads; 0: one per core
  int generate = 0;     // --generate: scenarios to draw instead of a run
  std::string out_dir;  // --out: where --generate writes them
  int league = 0;       // --league: scenarios of the family to run
  std::string plot;     // --plot: the league's or the run's SVG
  std::string csv;      // --csv: the league's every run
  std::string trace;    // --trace: a scenario run's every completion
  bool help = false;
};

// Adds lab's flags, description and footer to `app` (a `lab` subcommand or
// a standalone runner's App). Parsing `app` fills `*o`, which must outlive
// the parse. Bad values raise CLI::ValidationError; LabUsageError turns any
// CLI11 error into lab's one-line message.
void AddLabFlags(CLI::App& app, LabOptions* o);

// After a successful parse of `app`: what CLI11 left over (unknown flags,
// stray arguments; `app` allows extras so that they get lab's messages), a
// missing --scenario (or --out with --generate), and --scenario with
// --generate, as one-line errors.
absl::Status CheckLabArgs(const CLI::App& app, const LabOptions& o);

// The one-line message for a CLI11 error raised while parsing lab's flags
// (not for CLI::CallForHelp, which is not an error).
absl::Status LabUsageError(const CLI::ParseError& e);

// Parses `args` (without "pathwise" and "lab") on a fresh CLI::App.
// --help/-h sets `help` and skips the other checks.
absl::StatusOr<LabOptions> ParseLabArgs(const std::vector<std::string>& args);
std::string LabHelpText();

// Every policy of `policies` on `sc`, in that order, on up to `jobs`
// threads. The result does not depend on `jobs`. `trace` and `timeline`,
// when set, were made for `policies` and record their completions.
std::vector<PolicyResult> RunPolicies(
    const Scenario& sc, const std::vector<policy::Policy>& policies,
    uint64_t seed, int jobs, TraceRecorder* trace = nullptr,
    TimelineRecorder* timeline = nullptr);

// The whole subcommand on parsed options; returns the exit code.
int RunLab(const LabOptions& o, std::ostream& out, std::ostream& err);

// ParseLabArgs, then RunLab (pathwise_lab_tool); bad flags print one line
// and return 2.
int RunLabCommandLine(const std::vector<std::string>& args, std::ostream& out,
                      std::ostream& err);

}  // namespace pathwise::lab

#endif  // PATHWISE_LAB_LAB_CLI_H_

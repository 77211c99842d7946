// SPDX-License-Identifier: Apache-2.0
#include "agent/cli.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "agent/cli_app.h"
#include "agent/cli_flags.h"
#include "agent/cli_queues.h"
#include "cli/did_you_mean.h"
#include "cli/flag_alias.h"
#include "datapath/datapath_cli.h"

namespace pathwise::agent {
namespace {

// `text` with its words wrapped to lines of at most `width` columns (a
// longer word gets a line of its own), each line ended by '\n'.
std::string WrapText(absl::string_view text, size_t width) {
  std::string out;
  size_t line = 0;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (line > 0 && line + 1 + word.size() > width) {
      out += '\n';
      line = 0;
    } else if (line > 0) {
      out += ' ';
      ++line;
    }
    absl::StrAppend(&out, word);
    line += word.size();
  }
  return out + "\n";
}

// CLI11 2.1 prints each description on one line however long; this wraps
// them to kHelpWidth columns (CLI11 indents the lines after a '\n').
class WrappingFormatter : public CLI::Formatter {
 public:
  static constexpr size_t kHelpWidth = 80;

  std::string make_option_desc(const CLI::Option* opt) const override {
    return Wrap(CLI::Formatter::make_option_desc(opt));
  }
  // The deprecated aliases' group is left out. It is each command's last
  // group but for CLI11's hidden one (CLI11 puts a blank line after every
  // group but the last): each command adds --help first, and the datapath
  // its aliases after its hidden flags.
  std::string make_group(std::string group, bool is_positional,
                         std::vector<const CLI::Option*> opts) const override {
    if (group == cli::kDeprecatedGroup) return "";
    return CLI::Formatter::make_group(std::move(group), is_positional,
                                      std::move(opts));
  }
  std::string make_subcommand(const CLI::App* sub) const override {
    std::stringstream out;
    CLI::detail::format_help(out, sub->get_display_name(true),
                             Wrap(sub->get_description()), column_width_);
    return out.str();
  }

 private:
  std::string Wrap(absl::string_view text) const {
    std::string out = WrapText(text, kHelpWidth - column_width_);
    out.pop_back();
    return out;
  }
};

}  // namespace

Commands BuildApp(CLI::App& app, Options* o) {
  app.name("pathwise");
  app.description(absl::StrCat("pathwise: ", kSummary, "."));
  auto formatter = std::make_shared<WrappingFormatter>();
  formatter->column_width(36);
  app.formatter(formatter);
  // Leftovers are worded by LeftoverError, not CLI11's ExtrasError.
  app.allow_extras();
  // One command: a second command's name is a stray argument of the first.
  app.require_subcommand(0, 1);
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  Commands c;
  c.version_flag =
      app.add_flag("--version")->description("print the version and exit");

  // Each description is the command's line in `pathwise --help`; the
  // footer (its --help and man section) says more.
  c.serve = app.add_subcommand(
      "serve", "(default) run the agent: collect, serve metrics and pages");
  c.serve->footer(
      "Collects every --interval and serves /metrics, /healthz, /livez,\n"
      "/api/v1/topology, /api/v1/snapshot and the live page (/) on\n"
      "--web.listen-address.");
  AddServeFlags(*c.serve, o);

  c.snapshot = app.add_subcommand(
      "snapshot", "collect for --duration, print one exposition or JSON");
  c.snapshot->footer(
      "Prints the Prometheus text exposition (or a JSON document) to stdout\n"
      "and exits 0.");
  AddSnapshotFlags(*c.snapshot, o);

  c.topology = app.add_subcommand(
      "topology", "print subsystem -> head -> paths (nvme show-topology)");
  AddTopologyFlags(*c.topology, o);

  c.queues = app.add_subcommand(
      "queues", "print each NVMe/TCP I/O queue's chain, mismatches marked");
  c.queues->footer(
      "Each queue: qid, io_work CPU, TCP flow, NIC queues, IRQ and its CPUs.\n"
      "--plan prints the commands that would align them.");
  AddQueuesFlags(*c.queues, o);
  AddQueuesOptIn(*c.serve, o);
  AddQueuesOptIn(*c.snapshot, o);
  c.top = app.add_subcommand(
      "top", "live per-path view of a running agent or of local sampling");
  c.top->footer(
      "IOPS, p50/p99, health, ANA and weights per path, of the agent at\n"
      "--url or, without one answering, of local sampling.");
  AddTopFlags(*c.top, o);

  c.lab = app.add_subcommand("lab");
  lab::AddLabFlags(*c.lab, &o->lab);

  c.datapath = app.add_subcommand("datapath");
  datapath::AddDatapathFlags(*c.datapath, &o->datapath_flags);

  c.help = app.add_subcommand(
      "help", "print this help; `pathwise help COMMAND`: a command's flags");
  // The generated references (docs/flags.md, pathwise.1), for the build.
  c.help_markdown = c.help->add_flag("--markdown")->group("");
  c.help_man = c.help->add_flag("--man")->group("");
  c.version = app.add_subcommand("version", "print the version and exit");
  for (CLI::App* sub : {c.serve, c.snapshot, c.topology, c.queues, c.top,
                        c.datapath, c.help, c.version}) {
    sub->allow_extras();
  }
  return c;
}

std::vector<CLI::App*> FlagCommands(const Commands& c) {
  return {c.serve, c.snapshot, c.topology, c.queues, c.top, c.lab, c.datapath};
}

namespace {

// Whether some command of `app` has the flag --NAME.
bool IsFlagOfAnyCommand(CLI::App& app, absl::string_view name) {
  for (const CLI::App* sub : app.get_subcommands({})) {
    for (const CLI::Option* opt : sub->get_options()) {
      if (opt->check_lname(std::string(name))) return true;
    }
  }
  return false;
}

// The flags of `command` for suggestions: its own, and its former names
// (which suggest the flag they became).
std::vector<cli::Candidate> FlagCandidates(const CLI::App& command) {
  std::vector<cli::Candidate> out;
  for (const CLI::Option* opt : command.get_options()) {
    const std::optional<cli::Alias> alias = cli::AliasOf(*opt);
    if (opt->get_group().empty() && !alias) continue;  // test-only
    for (const std::string& name : opt->get_lnames()) {
      out.push_back({name, "--" + (alias ? alias->new_name : name)});
    }
  }
  return out;
}

std::string SeeHelp(absl::string_view command) {
  return absl::StrCat("(see 'pathwise ", command, " --help')");
}

// Each flag name as the command line spelled it, by its CLI11 key
// (cli::FlagKey), for the messages.
using Spellings = std::map<std::string, std::string>;

std::string AsTyped(const Spellings& spelled, absl::string_view name) {
  auto it = spelled.find(std::string(name));
  return it == spelled.end() ? std::string(name) : it->second;
}

// The first of `leftovers` (what `command` did not take) as a usage error.
absl::Status LeftoverError(CLI::App& app, const CLI::App& command,
                           const std::vector<std::string>& leftovers,
                           const Spellings& spelled) {
  if (leftovers.empty()) return absl::OkStatus();
  const std::string& name_of_command = command.get_name();
  const std::string& arg = leftovers.front();
  if (!absl::StartsWith(arg, "-") || arg == "-") {
    return absl::InvalidArgumentError(absl::StrCat(
        "unexpected argument \"", arg, "\" ", SeeHelp(name_of_command)));
  }
  absl::string_view name = arg;
  name = name.substr(0, name.find('='));
  const std::string typed = AsTyped(spelled, name);
  if (absl::StartsWith(name, "--") && IsFlagOfAnyCommand(app, name.substr(2))) {
    return absl::InvalidArgumentError(
        absl::StrCat("flag ", typed, " does not apply to 'pathwise ",
                     name_of_command, "' ", SeeHelp(name_of_command)));
  }
  std::string hint;
  if (absl::StartsWith(name, "--")) {
    if (std::optional<std::string> meant =
            cli::Closest(name.substr(2), FlagCandidates(command))) {
      hint = absl::StrCat(": did you mean ", *meant, "?");
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown flag ", typed, hint, " ", SeeHelp(name_of_command)));
}

// A CLI11 error of an agent command as pathwise words it.
absl::Status UsageError(const CLI::ParseError& e, const Spellings& spelled) {
  absl::string_view what = e.what();
  // CLI11 prefixes option errors with the option's name ("--interval: ").
  const size_t colon = what.find(": ");
  const bool named = absl::StartsWith(what, "-") && colon != what.npos;
  if (named && dynamic_cast<const CLI::ValidationError*>(&e) != nullptr) {
    return absl::InvalidArgumentError(what.substr(colon + 2));
  }
  if (named && dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr) {
    // The one mismatch a single-valued option has: no value at all.
    return absl::InvalidArgumentError(absl::StrCat(
        "flag ", AsTyped(spelled, what.substr(0, colon)), " needs a value"));
  }
  return absl::InvalidArgumentError(what);
}

// `pathwise --help`: the commands, one line each, and the global flags.
std::string TopHelp(const CLI::App& app) {
  std::string out = absl::StrCat(app.get_description(),
                                 "\n\nUsage: pathwise [COMMAND] [FLAGS]\n\n"
                                 "Commands:\n");
  for (const CLI::App* sub : app.get_subcommands({})) {
    absl::StrAppendFormat(&out, "  %-10s %s\n", sub->get_name(),
                          sub->get_description());
  }
  absl::StrAppend(
      &out,
      "\nGlobal flags:\n"
      "  -h, --help  this help; after a command, that command's flags\n"
      "  --version   print the version and exit\n\n"
      "Flags follow their command; without a command it is serve\n"
      "(`pathwise --interval=1s` is `pathwise serve --interval=1s`).\n"
      "Each command's flags: pathwise COMMAND --help. All of them: man\n"
      "pathwise, or docs/flags.md.\n",
      WrapText(kFlagNames, 72),
      "\nExit status: 0 success, 1 runtime failure (e.g. the listen port is\n"
      "in use), 2 bad usage.\n");
  return out;
}

// The messages quote arguments as given, and an argument may hold any
// byte: control characters are written as escapes (\n, \x1b) so that the
// message stays one line and cannot drive the terminal.
absl::Status OneLine(const absl::Status& s) {
  std::string out;
  for (const char ch : s.message()) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c == 0x7f) {
      constexpr char kHex[] = "0123456789abcdef";
      out += {'\\', 'x', kHex[c >> 4], kHex[c & 0xf]};
    } else {
      out += ch;
    }
  }
  return absl::Status(s.code(), out);
}

absl::Status UnknownCommand(const CLI::App& app, absl::string_view word) {
  std::vector<cli::Candidate> commands;
  for (const CLI::App* sub : app.get_subcommands({})) {
    commands.push_back({sub->get_name(), sub->get_name()});
  }
  std::string hint;
  if (std::optional<std::string> meant = cli::Closest(word, commands)) {
    hint = absl::StrCat(": did you mean ", *meant, "?");
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown command \"", word, "\"", hint,
      " (want serve, snapshot, topology, queues, top, lab or datapath; see "
      "'pathwise --help')"));
}

absl::StatusOr<Options> ParseArgsUnescaped(
    const std::vector<std::string>& args) {
  Options o;
  CLI::App app;
  const Commands c = BuildApp(app, &o);

  // serve is the default command: flags without a command are serve's.
  std::vector<std::string> argv = args;
  if (argv.empty() || (absl::StartsWith(argv[0], "-") && argv[0] != "-h" &&
                       argv[0] != "--help" && argv[0] != "--version")) {
    argv.insert(argv.begin(), "serve");
  }
  // `_` and `-` are the same in flag names: CLI11 knows each by its key.
  Spellings spelled;
  for (std::string& arg : argv) {
    if (!absl::StartsWith(arg, "--") || arg.size() == 2) continue;
    const size_t eq = std::min(arg.find('='), arg.size());
    std::string key = cli::FlagKey(arg.substr(0, eq));
    spelled.emplace(key, arg.substr(0, eq));
    arg.replace(0, eq, key);
  }
  std::reverse(argv.begin(), argv.end());  // CLI11 takes them last first
  try {
    app.parse(argv);
  } catch (const CLI::CallForHelp&) {
    o.command = Command::kHelp;
    o.help = app.get_subcommands().empty() ? TopHelp(app) : app.help();
    return o;
  } catch (const CLI::ParseError& e) {
    if (c.lab->parsed()) return lab::LabUsageError(e);
    return UsageError(e, spelled);
  }

  if (c.help->parsed()) {
    o.command = Command::kHelp;
    o.help_man = c.help_man->count() > 0;
    if (c.help_markdown->count() > 0) {
      o.help = FlagReferenceMarkdown();
    } else if (c.help->remaining().empty()) {
      o.help = TopHelp(app);
    } else {
      // `pathwise help COMMAND`: that command's --help.
      const std::string word = c.help->remaining().front();
      for (CLI::App* sub : FlagCommands(c)) {
        if (sub->get_name() == word) o.help = sub->help("pathwise");
      }
      if (o.help.empty()) return UnknownCommand(app, word);
    }
    return o;
  }
  if (c.version->parsed() || c.version_flag->count() > 0) {
    o.command = Command::kVersion;
    return o;
  }
  // Words before the command ("pathwise foo snapshot") are left to the
  // binary itself, not to the command.
  if (!app.get_subcommands().empty()) {
    if (absl::Status s = LeftoverError(app, *app.get_subcommands().front(),
                                       app.remaining(), spelled);
        !s.ok()) {
      return s;
    }
  }
  if (c.lab->parsed()) {
    o.command = Command::kLab;
    // lab words its own errors; an unknown flag gets the suggestion too.
    for (const std::string& arg : c.lab->remaining()) {
      if (!absl::StartsWith(arg, "-")) break;
      absl::Status s = LeftoverError(app, *c.lab, {arg}, spelled);
      return absl::InvalidArgumentError(absl::StrCat("lab: ", s.message()));
    }
    if (absl::Status s = lab::CheckLabArgs(*c.lab, o.lab); !s.ok()) return s;
    return o;
  }
  if (app.get_subcommands().empty()) {
    // The first argument was neither a flag nor a command.
    return UnknownCommand(app, args.front());
  }
  CLI::App* sub = app.get_subcommands().front();
  if (absl::Status s = LeftoverError(app, *sub, sub->remaining(), spelled);
      !s.ok()) {
    return s;
  }
  if (sub == c.snapshot) {
    o.command = Command::kSnapshot;
    if (o.format.empty()) o.format = "prometheus";
  } else if (sub == c.topology) {
    o.command = Command::kTopology;
    if (o.format.empty()) o.format = "text";
  } else if (sub == c.queues) {
    o.command = Command::kQueues;
    if (o.format.empty()) o.format = "text";
  } else if (sub == c.top) {
    o.command = Command::kTop;
    if (o.format.empty()) o.format = "text";
    o.top.format = o.format;
    o.top.interval = o.interval;
    o.top.url_given = c.top->count("--url") > 0;
  } else if (sub == c.datapath) {
    o.command = Command::kDatapath;
    absl::StatusOr<datapath::DatapathOptions> d =
        datapath::CheckDatapathArgs(o.datapath_flags);
    if (!d.ok()) return d.status();
    o.datapath = *std::move(d);
  } else {
    o.command = Command::kServe;
  }
  return o;
}

}  // namespace

std::string HelpText() {
  Options o;
  CLI::App app;
  BuildApp(app, &o);
  return TopHelp(app);
}

exporters::ExpositionOptions ExpositionOf(const Options& o) {
  using exporters::HistogramBuckets;
  const HistogramBuckets profile_buckets =
      o.metrics_profile == exporters::MetricsProfile::kDefault
          ? HistogramBuckets::kSparse
          : HistogramBuckets::kCoarse;
  return {.histogram_buckets = o.histogram_buckets.value_or(profile_buckets),
          .profile = o.metrics_profile};
}

absl::StatusOr<Options> ParseArgs(const std::vector<std::string>& args) {
  absl::StatusOr<Options> o = ParseArgsUnescaped(args);
  if (!o.ok()) return OneLine(o.status());
  return o;
}

}  // namespace pathwise::agent

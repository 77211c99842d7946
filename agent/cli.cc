// SPDX-License-Identifier: Apache-2.0
#include "agent/cli.h"

#include <algorithm>
#include <memory>
#include <sstream>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "agent/cli_flags.h"
#include "agent/cli_queues.h"
#include "datapath/datapath_cli.h"

namespace pathwise::agent {
namespace {

// CLI11 2.1 prints each description on one line however long; this wraps
// them to kHelpWidth columns (CLI11 indents the lines after a '\n').
class WrappingFormatter : public CLI::Formatter {
 public:
  static constexpr size_t kHelpWidth = 80;

  std::string make_option_desc(const CLI::Option* opt) const override {
    return Wrap(CLI::Formatter::make_option_desc(opt));
  }
  std::string make_subcommand(const CLI::App* sub) const override {
    std::stringstream out;
    CLI::detail::format_help(out, sub->get_display_name(true),
                             Wrap(sub->get_description()), column_width_);
    return out.str();
  }

 private:
  std::string Wrap(absl::string_view text) const {
    const size_t width = kHelpWidth - column_width_;
    std::string out;
    size_t line = 0;
    for (absl::string_view word :
         absl::StrSplit(text, ' ', absl::SkipEmpty())) {
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
    return out;
  }
};

struct Commands {
  CLI::App* serve;
  CLI::App* snapshot;
  CLI::App* topology;
  CLI::App* queues;
  CLI::App* top;
  CLI::App* lab;
  CLI::App* datapath;
  CLI::App* help;
  CLI::App* version;
  CLI::Option* version_flag;
};

// The whole command line, writing into `*o`.
Commands BuildApp(CLI::App& app, Options* o) {
  app.name("pathwise");
  app.description(
      "pathwise: makes every path of Linux NVMe native multipath visible.");
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
      app.add_flag("--version")->description("Print the version and exit.");

  c.serve = app.add_subcommand(
      "serve",
      "(default) run the agent: collect every --interval and serve "
      "/metrics, /healthz, /livez, /api/v1/topology, /api/v1/snapshot, /");
  AddServeFlags(*c.serve, o);

  c.snapshot = app.add_subcommand(
      "snapshot",
      "collect for --duration, print one exposition (or JSON document) to "
      "stdout, exit 0");
  AddSnapshotFlags(*c.snapshot, o);

  c.topology = app.add_subcommand(
      "topology",
      "print subsystem -> head -> paths, like `nvme show-topology`");
  AddTopologyFlags(*c.topology, o);

  c.queues = app.add_subcommand(
      "queues",
      "print each NVMe/TCP I/O queue's chain (qid, io_work CPU, TCP flow, "
      "NIC queues, IRQ and its CPUs) with mismatches marked; --plan prints "
      "the commands that would align them");
  AddQueuesFlags(*c.queues, o);
  AddQueuesOptIn(*c.serve, o);
  AddQueuesOptIn(*c.snapshot, o);
  c.top = app.add_subcommand(
      "top",
      "live per-path view (IOPS, p50/p99, health, ANA, weights) of a "
      "running agent (--url) or, without one, of local sampling");
  AddTopFlags(*c.top, o);

  c.lab = app.add_subcommand("lab");
  lab::AddLabFlags(*c.lab, &o->lab);

  c.datapath = app.add_subcommand("datapath");
  datapath::AddDatapathFlags(*c.datapath, &o->datapath_flags);

  c.help = app.add_subcommand("help", "print this help and exit");
  c.version = app.add_subcommand("version", "print the version and exit");
  for (CLI::App* sub : {c.serve, c.snapshot, c.topology, c.queues, c.top,
                        c.datapath, c.help, c.version}) {
    sub->allow_extras();
  }
  // Set last: subcommands inherit the footer of their parent.
  app.footer(
      "Flags follow their command; without one the command is serve\n"
      "(`pathwise --interval=1s` is `pathwise serve --interval=1s`).\n"
      "Exit status: 0 success, 1 runtime failure (e.g. the listen port is in\n"
      "use), 2 bad usage.");
  return c;
}

// Whether some command of `app` has the flag --NAME.
bool IsFlagOfAnyCommand(CLI::App& app, absl::string_view name) {
  for (const CLI::App* sub : app.get_subcommands({})) {
    for (const CLI::Option* opt : sub->get_options()) {
      if (opt->check_lname(std::string(name))) return true;
    }
  }
  return false;
}

// The first of `leftovers` (what `command` did not take) as a usage error.
absl::Status LeftoverError(CLI::App& app, absl::string_view command,
                           const std::vector<std::string>& leftovers) {
  if (leftovers.empty()) return absl::OkStatus();
  const std::string& arg = leftovers.front();
  if (!absl::StartsWith(arg, "-") || arg == "-") {
    return absl::InvalidArgumentError(absl::StrCat(
        "unexpected argument \"", arg, "\" (see pathwise --help)"));
  }
  absl::string_view name = arg;
  name = name.substr(0, name.find('='));
  if (absl::StartsWith(name, "--") && IsFlagOfAnyCommand(app, name.substr(2))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "flag ", name, " does not apply to 'pathwise ", command, "'"));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown flag ", name, " (see pathwise --help)"));
}

// A CLI11 error of an agent command as pathwise words it.
absl::Status UsageError(const CLI::ParseError& e) {
  absl::string_view what = e.what();
  // CLI11 prefixes option errors with the option's name ("--interval: ").
  const size_t colon = what.find(": ");
  const bool named = absl::StartsWith(what, "-") && colon != what.npos;
  if (named && dynamic_cast<const CLI::ValidationError*>(&e) != nullptr) {
    return absl::InvalidArgumentError(what.substr(colon + 2));
  }
  if (named && dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr) {
    // The one mismatch a single-valued option has: no value at all.
    return absl::InvalidArgumentError(
        absl::StrCat("flag ", what.substr(0, colon), " needs a value"));
  }
  return absl::InvalidArgumentError(what);
}

// The help of the whole binary: the commands, then each one's flags.
std::string FullHelp(CLI::App& app, const Commands& c) {
  // Not app.help(): that is the help of the command parsed, if any.
  std::string out = app.get_formatter()->make_help(&app, "pathwise",
                                                   CLI::AppFormatMode::Normal);
  for (CLI::App* sub :
       {c.serve, c.snapshot, c.topology, c.queues, c.top, c.datapath}) {
    absl::StrAppend(&out, "\n", sub->help("pathwise"));
  }
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
  std::reverse(argv.begin(), argv.end());  // CLI11 takes them last first
  try {
    app.parse(argv);
  } catch (const CLI::CallForHelp&) {
    o.command = Command::kHelp;
    o.help = app.get_subcommands().empty() ? FullHelp(app, c) : app.help();
    return o;
  } catch (const CLI::ParseError& e) {
    if (c.lab->parsed()) return lab::LabUsageError(e);
    return UsageError(e);
  }

  if (c.help->parsed()) {
    o.command = Command::kHelp;
    o.help = FullHelp(app, c);
    return o;
  }
  if (c.version->parsed() || c.version_flag->count() > 0) {
    o.command = Command::kVersion;
    return o;
  }
  // Words before the command ("pathwise foo snapshot") are left to the
  // binary itself, not to the command.
  if (!app.get_subcommands().empty()) {
    if (absl::Status s = LeftoverError(
            app, app.get_subcommands().front()->get_name(), app.remaining());
        !s.ok()) {
      return s;
    }
  }
  if (c.lab->parsed()) {
    o.command = Command::kLab;
    if (absl::Status s = lab::CheckLabArgs(*c.lab, o.lab); !s.ok()) return s;
    return o;
  }
  if (app.get_subcommands().empty()) {
    // The first argument was neither a flag nor a command.
    return absl::InvalidArgumentError(
        absl::StrCat("unknown command \"", args.front(),
                     "\": want serve, snapshot, topology, queues, top, lab or "
                     "datapath "
                     "(see pathwise --help)"));
  }
  CLI::App* sub = app.get_subcommands().front();
  if (absl::Status s = LeftoverError(app, sub->get_name(), sub->remaining());
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
  return FullHelp(app, BuildApp(app, &o));
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

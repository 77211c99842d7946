#include "agent/cli_queues.h"

#include <string>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"

namespace pathwise::agent {
namespace {

// A validator with pathwise's wording: `invalid value "TEXT" for --NAME:
// want ...` unless `ok(text)`.
template <typename Ok>
CLI::Validator Want(const std::string& name, const std::string& want, Ok ok) {
  return CLI::Validator(
      [name, want, ok](std::string& text) -> std::string {
        if (ok(text)) return "";
        return absl::StrCat("invalid value \"", text, "\" for --", name, ": ",
                            want);
      },
      "");
}

bool IsBool(const std::string& t) { return t == "true" || t == "false"; }

// A string option stored through a callback, as agent/cli_flags.cc adds
// them: an empty value is then checked by the validator, not refused by
// CLI11 as missing.
CLI::Option* AddString(CLI::App& app, const std::string& name, std::string* out,
                       const std::string& help) {
  return app.add_option_function<std::string>(
      "--" + name, [out](const std::string& t) { *out = t; }, help);
}

}  // namespace

void AddQueuesFlags(CLI::App& app, Options* o) {
  AddString(app, "format", &o->format, "Output format: text or json.")
      ->type_name("text|json")
      ->default_str("text")
      ->check(Want(
          "format", "queues wants text or json",
          [](const std::string& t) { return t == "text" || t == "json"; }));
  app.add_flag("--plan", o->queues_plan,
               "Print the commands (IRQ affinity, XPS/RPS masks, ethtool "
               "ntuple rules, queue counts) that would align each I/O "
               "queue's flow, NIC queue, IRQ and io_work CPU, and why each; "
               "nothing is changed.")
      ->check(Want("plan", "want true or false", IsBool));
  AddString(app, "sysfs_root", &o->sysfs_root,
            "Where sysfs is mounted. Anything but /sys is bound over "
            "/sys in a private mount namespace (needs CAP_SYS_ADMIN); "
            "sock_diag and /proc stay the running kernel's.")
      ->type_name("DIR")
      ->default_str(o->sysfs_root)
      ->check(Want("sysfs_root", "must not be empty",
                   [](const std::string& t) { return !t.empty(); }));
  app.add_option_function<std::string>(
         "--bpf",
         [o](const std::string& t) {
           o->bpf = t == "off"        ? BpfMode::kOff
                    : t == "required" ? BpfMode::kRequired
                                      : BpfMode::kAuto;
         },
         "The nvme_tcp queue behind each socket (qid, io_cpu, NIC queues) "
         "from a BPF iterator: auto (when nvme_tcp has BTF), required (fail "
         "without it), off.")
      ->type_name("auto|required|off")
      ->default_str("auto")
      ->check(
          Want("bpf", "want auto, required or off", [](const std::string& t) {
            return t == "auto" || t == "required" || t == "off";
          }));
  AddString(app, "log_level", &o->log_level,
            "Log level: debug, info, warn or error. Logs go to stderr.")
      ->type_name("LEVEL")
      ->default_str(o->log_level)
      ->check(Want("log_level", "want debug, info, warn or error",
                   [](const std::string& t) {
                     return t == "debug" || t == "info" || t == "warn" ||
                            t == "error";
                   }));
}

void AddQueuesOptIn(CLI::App& app, Options* o) {
  app.add_flag("--queues", o->queues,
               "Also export the NVMe/TCP queue map (pathwise_queue_*, "
               "pathwise_flow_*): series per hardware queue and per TCP "
               "flow, so their number grows with the queues.")
      ->check(Want("queues", "want true or false", IsBool));
}

}  // namespace pathwise::agent

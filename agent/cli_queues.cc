// SPDX-License-Identifier: Apache-2.0
#include "agent/cli_queues.h"

#include <string>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "agent/flag_values.h"

namespace pathwise::agent {
namespace {

// --plan and --queues are CLI11 flags (bare, or =true/=false); anything
// else gets pathwise's wording.
CLI::Validator WantBool(const std::string& name) {
  return CLI::Validator(
      [name](std::string& text) -> std::string {
        if (text == "true" || text == "false") return "";
        return absl::StrCat("invalid value \"", text, "\" for --", name,
                            ": want true or false");
      },
      "");
}

}  // namespace

void AddQueuesFlags(CLI::App& app, Options* o) {
  AddFormat(app, o, "queues", "text", "json");
  app.add_flag("--plan", o->queues_plan,
               "Print the commands (IRQ affinity, XPS/RPS masks, ethtool "
               "ntuple rules, queue counts) that would align each I/O "
               "queue's flow, NIC queue, IRQ and io_work CPU, and why each; "
               "nothing is changed.")
      ->check(WantBool("plan"));
  AddSysfsRoot(
      app, o,
      "Where sysfs is mounted. Anything but /sys is bound over /sys in a "
      "private mount namespace (needs CAP_SYS_ADMIN); sock_diag and /proc "
      "stay the running kernel's.");
  AddValue<BpfMode>(
      app, "bpf", &o->bpf, ParseBpfMode, "auto|required|off", "auto",
      "The nvme_tcp queue behind each socket (qid, io_cpu, NIC queues) from "
      "a BPF iterator: auto (when nvme_tcp has BTF), required (fail without "
      "it), off.");
  AddInterval(app, o,
              "With the eBPF sampler: the window over which each NVMe path's "
              "I/O is counted per hardware queue (IOPS, latency, mean in "
              "flight, remote completions).");
  AddLogFlags(app, o);
}

void AddQueuesOptIn(CLI::App& app, Options* o) {
  app.add_flag("--queues", o->queues,
               "Also export the NVMe/TCP queue map (pathwise_queue_*, "
               "pathwise_flow_*) and, with the eBPF sampler, each NVMe path's "
               "I/O per hardware queue (pathwise_queue_hctx_*): series per "
               "hardware queue and per TCP flow, so their number grows with "
               "the queues.")
      ->check(WantBool("queues"));
}

}  // namespace pathwise::agent

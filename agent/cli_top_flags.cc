// SPDX-License-Identifier: Apache-2.0
// `pathwise top`'s flags.
#include <optional>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "agent/cli_flags.h"
#include "agent/flag_values.h"
#include "ui/source.h"
#include "ui/top.h"

namespace pathwise::agent {

// `pathwise top`: where to read (--url, else local sampling with
// --path.sysfs and --bpf), how often, and what to show first.
void AddTopFlags(CLI::App& app, Options* o) {
  ui::TopOptions& t = o->top;
  AddValue<std::string>(
      app, "url", &t.url,
      [](absl::string_view text, std::string* v) -> std::string {
        absl::StatusOr<std::string> url = ui::SnapshotUrl(text);
        if (!url.ok()) return "want http://HOST[:PORT] or https://HOST[:PORT]";
        *v = std::string(text);
        return "";
      },
      "URL", t.url,
      "The agent to read (its /api/v1/snapshot); credentials for basic "
      "auth go in it (https://USER:PASSWORD@HOST:PORT). Without --url and "
      "with no agent answering at the default, top samples by itself, as "
      "`snapshot` does (root for the eBPF sampler).");
  AddInterval(app, o,
              "Refresh: one frame this often, its rates over the agent's last "
              "interval (local sampling collects this often).");
  app.add_flag("--once", t.once,
               "Print one frame (the rates over one --interval) and exit.");
  AddFormat(app, o, "top", "text", "json");
  AddValue<ui::SortKey>(
      app, "sort", &t.sort,
      [](absl::string_view text, ui::SortKey* k) -> std::string {
        std::optional<ui::SortKey> key = ui::ParseSortKey(text);
        if (!key)
          return "want name, health, riops, wiops, rp99, wp99, ewma or errors";
        *k = *key;
        return "";
      },
      "KEY", "name",
      "Sort the table by name (grouped by head), health (worst first), "
      "riops, wiops, rp99, wp99, ewma (highest first) or errors.");
  AddValue<std::string>(
      app, "filter", &t.filter,
      [](absl::string_view text, std::string* v) {
        *v = std::string(text);
        return std::string();
      },
      "TEXT", "",
      "Show only paths (controllers, devices) whose name, head, controller, "
      "subsystem or address contains TEXT.");
  AddValue<ui::View>(
      app, "view", &t.view,
      [](absl::string_view text, ui::View* v) -> std::string {
        std::optional<ui::View> view = ui::ParseView(text);
        if (!view) return "want paths, controllers or devices";
        *v = *view;
        return "";
      },
      "paths|controllers|devices", "paths", "The table to show first.");
  AddValue<int>(
      app, "width", &t.width,
      [](absl::string_view text, int* v) {
        return ParseInt(text, v, 0, 100000, "must be >= 0");
      },
      "COLUMNS", "0",
      "--once: fit the text in this many columns, hiding the least "
      "important columns first; 0: the terminal's width, no limit when "
      "stdout is not a terminal.");
  AddSysfsRoot(app, o);
  AddValue<BpfMode>(app, "bpf", &o->bpf, ParseBpfMode, "auto|required|off",
                    "auto",
                    "Local sampling only: the eBPF sampler (auto, required) or "
                    "sysfs counters (off).");
  AddLogFlags(app, o);
}

}  // namespace pathwise::agent

// SPDX-License-Identifier: Apache-2.0
#include "exporters/topology_text.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "exporters/labels.h"
#include "exporters/utf8.h"

namespace pathwise::exporters {
namespace {

std::string OrDash(absl::string_view s) {
  return s.empty() ? "-" : std::string(s);
}

}  // namespace

// Example:
//   nvme-subsys0 - NQN=nqn.2024-01.io.pathwise:tb
//                  iopolicy=round-robin model=Linux serial=abc123
//   \
//    +- nvme0n1 nsid=1 dev=259:0
//    |  +- nvme0c0n1 nvme0 tcp traddr=10.0.0.1,trsvcid=4420 live optimized
//    |  +- nvme0c1n1 nvme1 tcp traddr=10.0.1.1,trsvcid=4420 live optimized
// and with scoring, after the serial "recommended=queue-depth" and after
// each path's ANA state " healthy weight=32/32/32 score=100" (weights
// read/write/other; score "-" without evidence).
//    +- nvme2 tcp traddr=... connecting (no paths)
std::string TopologyToText(const model::Topology& t,
                           const model::Scoring* scoring) {
  std::string out;
  if (t.subsystems.empty()) return "no NVMe subsystems found\n";
  for (const model::Subsystem& s : t.subsystems) {
    const std::string indent(s.name.size() + 3, ' ');
    absl::StrAppend(&out, s.name, " - NQN=", s.nqn, "\n", indent,
                    "iopolicy=", OrDash(IopolicyText(s)),
                    " model=", OrDash(s.model), " serial=", OrDash(s.serial));
    if (scoring != nullptr) {
      auto it = scoring->iopolicy_recommended.find(s.name);
      if (it != scoring->iopolicy_recommended.end()) {
        absl::StrAppend(&out, " recommended=",
                        OrDash(RecommendedIopolicyText(it->second, s)));
      }
    }
    absl::StrAppend(&out, "\n\\\n");
    for (const model::Head& h : t.heads) {
      if (h.subsystem != s.name) continue;
      absl::StrAppend(&out, " +- ", h.name, " nsid=", h.nsid,
                      " dev=", h.dev ? model::ToString(*h.dev) : "-", "\n");
      for (const model::Path& p : t.paths) {
        if (p.head != h.name) continue;
        const model::Controller* c = t.FindController(p.controller);
        absl::StrAppend(&out, " |  +- ", p.name, " ", p.controller, " ",
                        OrDash(c ? c->transport : ""), " ",
                        OrDash(c ? c->address : ""), " ",
                        OrDash(c ? ControllerStateText(*c) : ""), " ",
                        OrDash(AnaStateText(p)));
        if (scoring != nullptr) {
          if (auto it = scoring->paths.find(p.name);
              it != scoring->paths.end()) {
            const model::PathScoring& ps = it->second;
            absl::StrAppend(
                &out, " ", PathHealthLabel(ps.health), " weight=", ps.weight[0],
                "/", ps.weight[1], "/", ps.weight[2],
                " score=", ps.score ? absl::StrFormat("%.0f", *ps.score) : "-");
          }
        }
        absl::StrAppend(&out, "\n");
      }
    }
    for (const model::Controller& c : t.controllers) {
      if (c.subsystem != s.name) continue;
      bool has_path = false;
      for (const model::Path& p : t.paths) has_path |= p.controller == c.name;
      if (has_path) continue;
      absl::StrAppend(&out, " +- ", c.name, " ", OrDash(c.transport), " ",
                      OrDash(c.address), " ", OrDash(ControllerStateText(c)),
                      " (no paths)\n");
    }
  }
  ReplaceInvalidUtf8(out);  // sysfs strings need not be UTF-8
  return out;
}

}  // namespace pathwise::exporters

// SPDX-License-Identifier: Apache-2.0
// The text layout of a `pathwise top` frame: a title line, one line per
// subsystem (iopolicy, the advisor's recommendation, the actuator's last
// decision), the userspace datapath's line when the snapshots are its
// (policy, usable paths, requests that waited for a path; its paths then
// have DP-STATE and SEL% columns), then a fixed-width table of paths (grouped
// under their heads when sorted by name), controllers or other block devices.
// It fits a given width: columns are hidden by priority (the path, its health
// and ANA state, read IOPS and p99 stay longest) and what still does not fit is
// cut. `--once` prints it; the curses front end draws the same lines.
#ifndef PATHWISE_UI_TEXT_H_
#define PATHWISE_UI_TEXT_H_

#include <string>
#include <vector>

#include "ui/frame.h"

namespace pathwise::ui {

enum class View : uint8_t { kPaths, kControllers, kDevices };
// The --view spelling: paths, controllers, devices.
absl::string_view ViewName(View v);
std::optional<View> ParseView(absl::string_view name);

struct TextOptions {
  View view = View::kPaths;
  // Columns of the terminal; 0: no limit (every column, nothing cut).
  int width = 0;
  SortKey sort = SortKey::kName;  // named in the title line
  std::string filter;             // named in the title line when set
  // Where the snapshots come from, for the title line: the agent's URL, or
  // "local sampling (no agent at URL)".
  std::string source;
};

// How the curses front end draws a line (--once ignores it).
enum class LineStyle : uint8_t {
  kNormal,
  kTitle,   // the title line
  kHeader,  // the table's column header
  kWarn,    // a degraded path, an iopolicy the advisor would change
  kBad,     // a failed path or stage, an unreachable controller
};

struct Line {
  std::string text;
  LineStyle style = LineStyle::kNormal;
};

// The frame as lines, none longer than `width` (when set). Strings from the
// kernel are shown in printable ASCII (anything else as '?'), so that a
// byte is a column and nothing in them can drive the terminal.
std::vector<Line> RenderLines(const Frame& frame, const TextOptions& options);

// RenderLines joined, each line ending in '\n'.
std::string RenderText(const Frame& frame, const TextOptions& options);

// Cell formats, shared with the JSON view's tests: latency in us/ms/s with
// three significant digits at most, "-" when unknown.
std::string FormatLatency(const std::optional<double>& seconds);

}  // namespace pathwise::ui

#endif  // PATHWISE_UI_TEXT_H_

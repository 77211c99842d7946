// SPDX-License-Identifier: Apache-2.0
// `pathwise top`: the options, the pure state of the live view (what each
// key does), one frame for scripts (--once, --format=json) and the live
// terminal view (ncurses, ui/curses_top.cc).
#ifndef PATHWISE_UI_TOP_H_
#define PATHWISE_UI_TOP_H_

#include <ostream>
#include <string>

#include "absl/time/time.h"
#include "ui/frame.h"
#include "ui/source.h"
#include "ui/text.h"

namespace pathwise::ui {

inline constexpr char kDefaultUrl[] = "http://127.0.0.1:9877";

struct TopOptions {
  std::string url = kDefaultUrl;
  bool url_given = false;  // --url was on the command line
  absl::Duration interval = absl::Seconds(1);
  bool once = false;
  std::string format = "text";  // text | json (json: one frame, as --once)
  SortKey sort = SortKey::kName;
  std::string filter;
  View view = View::kPaths;
  int width = 0;  // 0: the terminal's, or no limit when not a terminal
};

// Keys of the live view, as the state machine sees them (the curses front
// end maps its KEY_* codes onto these; printable keys are themselves).
enum Key : int {
  kKeyUp = 0x1000,
  kKeyDown,
  kKeyPageUp,
  kKeyPageDown,
  kKeyHome,
  kKeyEnd,
  kKeyBackspace,
  kKeyEnter,
  kKeyEscape,
};

// What the live view shows, changed by keys:
//   q quit; s / S next / previous sort column; p paths, c controllers,
//   d devices; / edit the path filter (Enter applies, Esc cancels, an
//   empty filter shows all); arrows, PgUp/PgDn, Home/End scroll.
struct ViewState {
  View view = View::kPaths;
  SortKey sort = SortKey::kName;
  std::string filter;
  bool editing = false;  // typing a filter
  std::string edit;      // the filter being typed
  int scroll = 0;        // first table row shown
  bool quit = false;
};

ViewState InitialState(const TopOptions& o);
// Applies one key; `page` is the number of table rows on the screen.
void HandleKey(ViewState& state, int key, int page);

// The bottom line of the live view: the keys, or the filter being typed.
std::string StatusLine(const ViewState& state);

// The frame `options`/`state` ask for: built from `pair`, filtered, sorted.
Frame MakeFrame(const SnapshotPair& pair, const ViewState& state);

// The columns of the terminal on stdout; 0 when stdout is not one.
int StdoutColumns();

// --once and --format=json: two snapshots an interval apart (the source's
// next collection), then one frame to `out`. Errors are one line on `err`,
// "pathwise: ..."; returns the exit status (0, or 1).
int RunOnce(const TopOptions& o, SnapshotSource& source, std::ostream& out,
            std::ostream& err);

// The live view on the terminal (ncurses) until q or a signal; returns the
// exit status. Needs stdin and stdout to be a terminal.
int RunLive(const TopOptions& o, SnapshotSource& source, std::ostream& err);

}  // namespace pathwise::ui

#endif  // PATHWISE_UI_TOP_H_

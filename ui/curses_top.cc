// SPDX-License-Identifier: Apache-2.0
// The live view of `pathwise top` on ncurses: the lines of ui/text.h drawn
// with colours, the table scrolled under a fixed title and header, a key
// line at the bottom; keys go to the pure state machine of ui/top.h.
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "ui/top.h"

// Last: curses.h defines function-like macros (move, erase, timeout) that
// would rewrite the standard library's members in headers after it.
#include <curses.h>

namespace pathwise::ui {
namespace {

enum Pair : short { kWarnPair = 1, kBadPair = 2 };

int MapKey(int ch) {
  switch (ch) {
    case KEY_UP:
      return kKeyUp;
    case KEY_DOWN:
      return kKeyDown;
    case KEY_PPAGE:
      return kKeyPageUp;
    case KEY_NPAGE:
      return kKeyPageDown;
    case KEY_HOME:
      return kKeyHome;
    case KEY_END:
      return kKeyEnd;
    case KEY_BACKSPACE:
      return kKeyBackspace;
    case KEY_ENTER:
    case '\n':
    case '\r':
      return kKeyEnter;
    case 27:
      return kKeyEscape;
    default:
      return ch;
  }
}

attr_t Attr(LineStyle style, bool color) {
  switch (style) {
    case LineStyle::kTitle:
      return A_REVERSE;
    case LineStyle::kHeader:
      return A_BOLD | A_UNDERLINE;
    case LineStyle::kWarn:
      return color ? COLOR_PAIR(kWarnPair) : A_BOLD;
    case LineStyle::kBad:
      return color ? COLOR_PAIR(kBadPair) | A_BOLD : A_BOLD | A_REVERSE;
    case LineStyle::kNormal:
      break;
  }
  return A_NORMAL;
}

void Put(int row, const Line& line, bool color) {
  const attr_t a = Attr(line.style, color);
  attron(a);
  mvaddnstr(row, 0, line.text.c_str(), COLS);
  if (line.style == LineStyle::kTitle) {
    // The title bar spans the whole width.
    for (int x = static_cast<int>(line.text.size()); x < COLS; ++x) {
      mvaddch(row, x, ' ');
    }
  }
  attroff(a);
}

// Draws one screen; returns the number of table rows it has room for.
int Draw(const SnapshotPair& pair, ViewState& state, const std::string& error,
         const std::string& source, bool color) {
  erase();
  const int rows = LINES;
  std::vector<Line> lines;
  if (pair.now() == nullptr) {
    lines.push_back({"pathwise top  " + source, LineStyle::kTitle});
    lines.push_back({error.empty() ? "waiting for the first snapshot..." : "",
                     LineStyle::kNormal});
  } else {
    TextOptions t;
    t.view = state.view;
    t.sort = state.sort;
    t.filter = state.filter;
    t.source = source;
    t.width = COLS;
    lines = RenderLines(MakeFrame(pair, state), t);
  }
  // Everything up to the table's header stays; the rows under it scroll.
  size_t fixed = lines.size();
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].style == LineStyle::kHeader) {
      fixed = i + 1;
      break;
    }
  }
  const int body_rows = std::max(0, rows - 1 - static_cast<int>(fixed));
  const int body = static_cast<int>(lines.size() - fixed);
  state.scroll = std::clamp(state.scroll, 0, std::max(0, body - body_rows));
  int row = 0;
  for (size_t i = 0; i < fixed && row < rows - 1; ++i)
    Put(row++, lines[i], color);
  for (int i = state.scroll; i < body && row < rows - 1; ++i) {
    Put(row++, lines[fixed + i], color);
  }
  if (rows > 0) {
    Line status{error.empty() ? StatusLine(state) : "error: " + error,
                error.empty() ? LineStyle::kTitle : LineStyle::kBad};
    if (state.editing) status = {StatusLine(state), LineStyle::kTitle};
    Put(rows - 1, status, color);
  }
  refresh();
  return body_rows;
}

}  // namespace

int RunLive(const TopOptions& o, SnapshotSource& source, std::ostream& err) {
  if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
    err << "pathwise: top needs a terminal on stdin and stdout; use --once "
           "or --format=json for one frame\n";
    return 2;
  }
  SCREEN* screen = newterm(nullptr, stdout, stdin);
  if (screen == nullptr) {
    err << "pathwise: top cannot drive this terminal (TERM="
        << (getenv("TERM") ? getenv("TERM") : "") << ")\n";
    return 1;
  }
  cbreak();
  noecho();
  keypad(stdscr, TRUE);
  set_escdelay(50);
  curs_set(0);
  bool color = false;
  if (has_colors()) {
    start_color();
    use_default_colors();
    init_pair(kWarnPair, COLOR_YELLOW, -1);
    init_pair(kBadPair, COLOR_RED, -1);
    color = true;
  }
  ViewState state = InitialState(o);
  SnapshotPair pair;
  std::string error;
  const std::string describe = source.Describe();
  absl::Time next = absl::Now();
  int page = 1;
  while (!state.quit) {
    if (absl::Now() >= next) {
      absl::StatusOr<std::shared_ptr<const model::Snapshot>> s = source.Next();
      if (s.ok()) {
        pair.Push(*s);
        error.clear();
      } else {
        error = std::string(s.status().message());
      }
      next += o.interval;
      if (next < absl::Now()) next = absl::Now() + o.interval;
    }
    page = Draw(pair, state, error, describe, color);
    const int64_t wait = std::clamp<int64_t>(
        absl::ToInt64Milliseconds(next - absl::Now()), 0, 1000);
    timeout(static_cast<int>(wait));
    const int ch = getch();
    if (ch == ERR || ch == KEY_RESIZE) continue;  // redrawn at the new size
    HandleKey(state, MapKey(ch), page);
  }
  endwin();
  delscreen(screen);
  return 0;
}

}  // namespace pathwise::ui

// SPDX-License-Identifier: Apache-2.0
#include "ui/top.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "exporters/topology_json.h"
#include "ui/frame_json.h"

namespace pathwise::ui {
namespace {

SortKey Step(SortKey k, int by) {
  const int n = static_cast<int>(kAllSortKeys.size());
  int i = 0;
  while (i < n && kAllSortKeys[i] != k) ++i;
  return kAllSortKeys[((i + by) % n + n) % n];
}

// The next snapshot, waiting (up to `deadline`) while the agent has not
// collected yet.
absl::StatusOr<std::shared_ptr<const model::Snapshot>> NextCollected(
    SnapshotSource& source, absl::Time deadline) {
  while (true) {
    absl::StatusOr<std::shared_ptr<const model::Snapshot>> s = source.Next();
    if (s.ok() || s.status().code() != absl::StatusCode::kAborted ||
        absl::Now() >= deadline) {
      return s;
    }
    absl::SleepFor(absl::Milliseconds(200));
  }
}

}  // namespace

ViewState InitialState(const TopOptions& o) {
  ViewState s;
  s.view = o.view;
  s.sort = o.sort;
  s.filter = o.filter;
  return s;
}

void HandleKey(ViewState& s, int key, int page) {
  page = std::max(page, 1);
  if (s.editing) {
    if (key == kKeyEnter || key == '\n' || key == '\r') {
      s.filter = s.edit;
      s.editing = false;
      s.scroll = 0;
    } else if (key == kKeyEscape) {
      s.editing = false;
    } else if (key == kKeyBackspace || key == 127 || key == 8) {
      if (!s.edit.empty()) s.edit.pop_back();
    } else if (key >= 0x20 && key < 0x7f) {
      s.edit += static_cast<char>(key);
    }
    return;
  }
  switch (key) {
    case 'q':
    case 'Q':
      s.quit = true;
      break;
    case 's':
      s.sort = Step(s.sort, 1);
      s.scroll = 0;
      break;
    case 'S':
      s.sort = Step(s.sort, -1);
      s.scroll = 0;
      break;
    case 'p':
      s.view = View::kPaths;
      s.scroll = 0;
      break;
    case 'c':
      s.view = View::kControllers;
      s.scroll = 0;
      break;
    case 'd':
      s.view = View::kDevices;
      s.scroll = 0;
      break;
    case '/':
      s.editing = true;
      s.edit = s.filter;
      break;
    case kKeyUp:
      s.scroll = std::max(0, s.scroll - 1);
      break;
    case kKeyDown:
      ++s.scroll;
      break;
    case kKeyPageUp:
      s.scroll = std::max(0, s.scroll - page);
      break;
    case kKeyPageDown:
      s.scroll += page;
      break;
    case kKeyHome:
      s.scroll = 0;
      break;
    case kKeyEnd:
      s.scroll = 1 << 30;  // clamped by the front end to the last page
      break;
    default:
      break;
  }
}

std::string StatusLine(const ViewState& s) {
  if (s.editing) return absl::StrCat("filter: ", s.edit, "_");
  return "q quit  s/S sort  / filter  p paths  c controllers  d devices  "
         "arrows/PgUp/PgDn scroll";
}

Frame MakeFrame(const SnapshotPair& pair, const ViewState& state) {
  if (pair.now() == nullptr) return Frame{};
  Frame f = BuildFrame(pair.earlier(), *pair.now());
  FilterFrame(f, state.filter);
  SortFrame(f, state.sort);
  return f;
}

int StdoutColumns() {
  winsize ws{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0) {
    return ws.ws_col;
  }
  return 0;
}

int RunOnce(const TopOptions& o, SnapshotSource& source, std::ostream& out,
            std::ostream& err) {
  auto fail = [&err](const absl::Status& s) {
    err << "pathwise: " << s.message() << "\n";
    return 1;
  };
  const absl::Duration patience = std::max(absl::Seconds(15), o.interval * 3);
  SnapshotPair pair;
  absl::StatusOr<std::shared_ptr<const model::Snapshot>> first =
      NextCollected(source, absl::Now() + patience);
  if (!first.ok()) return fail(first.status());
  pair.Push(*first);
  // The next collection of the source (a local pipeline collects on each
  // Next(); an agent on its own interval, polled here).
  const absl::Time deadline = absl::Now() + patience;
  absl::SleepFor(o.interval);
  while (true) {
    absl::StatusOr<std::shared_ptr<const model::Snapshot>> s =
        NextCollected(source, deadline);
    if (!s.ok()) return fail(s.status());
    pair.Push(*s);
    if (pair.complete() || absl::Now() >= deadline) break;
    absl::SleepFor(
        std::clamp(o.interval / 4, absl::Milliseconds(100), absl::Seconds(1)));
  }
  ViewState state = InitialState(o);
  const Frame frame = MakeFrame(pair, state);
  if (o.format == "json") {
    out << exporters::JsonText(FrameToJson(frame, source.Describe()));
  } else {
    TextOptions t;
    t.view = state.view;
    t.sort = state.sort;
    t.filter = state.filter;
    t.source = source.Describe();
    t.width = o.width;
    out << RenderText(frame, t);
  }
  out.flush();
  return out.good() ? 0 : 1;
}

}  // namespace pathwise::ui

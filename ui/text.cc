// SPDX-License-Identifier: Apache-2.0
#include "ui/text.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "exporters/labels.h"

namespace pathwise::ui {
namespace {

// Printable ASCII only: one byte, one column, no control sequences.
std::string Clean(absl::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c < 0x20 || c > 0x7e) c = '?';
  }
  return out;
}

std::string Cut(std::string s, int width) {
  if (width > 0 && static_cast<int>(s.size()) > width) s.resize(width);
  return s;
}

std::string FormatRate(double v) {
  if (v < 9999.5) return absl::StrFormat("%.0f", v);
  if (v < 999950) return absl::StrFormat("%.1fk", v / 1e3);
  return absl::StrFormat("%.1fM", v / 1e6);
}

std::string FormatMib(double v) {
  return v < 999.95 ? absl::StrFormat("%.1f", v) : absl::StrFormat("%.0f", v);
}

std::string FormatCount(const std::optional<Count>& c) {
  if (!c) return "-";
  if (c->interval == 0) return absl::StrCat(c->total);
  return absl::StrCat(c->total, "(+", c->interval, ")");
}

struct Column {
  const char* header;
  int priority;  // lower: kept longer on a narrow terminal
  bool left;     // left-aligned (names), else right (numbers)
};

struct Row {
  std::vector<std::string> cells;
  LineStyle style = LineStyle::kNormal;
};

// The columns shown at `width`: by priority while they fit (one space
// between columns); at least the first by priority.
std::vector<bool> Fit(const std::vector<Column>& cols,
                      const std::vector<int>& widths, int width) {
  std::vector<bool> shown(cols.size(), width <= 0);
  if (width <= 0) return shown;
  std::vector<size_t> order(cols.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return cols[a].priority < cols[b].priority;
  });
  // Strictly by priority: a narrow column of low priority does not take
  // the place of a wider, more important one.
  int used = 0;
  for (size_t i : order) {
    const int need = widths[i] + (used > 0 ? 1 : 0);
    if (used > 0 && used + need > width) break;
    shown[i] = true;
    used += need;
  }
  return shown;
}

void Table(const std::vector<Column>& cols, const std::vector<Row>& rows,
           int width, std::vector<Line>& out) {
  std::vector<int> widths(cols.size());
  for (size_t i = 0; i < cols.size(); ++i) {
    widths[i] = static_cast<int>(std::string_view(cols[i].header).size());
    for (const Row& r : rows) {
      widths[i] = std::max(widths[i], static_cast<int>(r.cells[i].size()));
    }
  }
  const std::vector<bool> shown = Fit(cols, widths, width);
  auto line = [&](const std::vector<std::string>& cells, LineStyle style) {
    std::string text;
    for (size_t i = 0; i < cols.size(); ++i) {
      if (!shown[i]) continue;
      if (!text.empty()) text += ' ';
      const int pad = widths[i] - static_cast<int>(cells[i].size());
      if (cols[i].left) {
        text += cells[i];
        text.append(pad, ' ');
      } else {
        text.append(pad, ' ');
        text += cells[i];
      }
    }
    // No trailing blanks (empty cells at the end of a head's line).
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out.push_back({Cut(std::move(text), width), style});
  };
  std::vector<std::string> header;
  for (const Column& c : cols) header.push_back(c.header);
  line(header, LineStyle::kHeader);
  for (const Row& r : rows) line(r.cells, r.style);
}

// Rates are unknown until a second snapshot gives an interval.
std::string Rate(const Frame& f, double v) {
  return f.interval_seconds > 0 ? FormatRate(v) : "-";
}
std::string Mib(const Frame& f, double v) {
  return f.interval_seconds > 0 ? FormatMib(v) : "-";
}

LineStyle PathStyle(const PathRow& p) {
  if (p.health == model::PathHealth::kFailed) return LineStyle::kBad;
  if (p.datapath_state && p.datapath_state->starts_with("failed")) {
    return LineStyle::kBad;
  }
  if (p.ana_state == "inaccessible" || p.ana_state == "persistent-loss") {
    return LineStyle::kBad;
  }
  if (p.health == model::PathHealth::kDegraded) return LineStyle::kWarn;
  if (p.errors && p.errors->interval > 0) return LineStyle::kWarn;
  return LineStyle::kNormal;
}

std::string Weight(const PathRow& p) {
  if (!p.weight_read) return "-";
  return absl::StrCat(*p.weight_read, "/", p.weight_write.value_or(0));
}

const std::vector<Column>& PathColumns() {
  static const auto* cols = new std::vector<Column>{
      {"PATH", 0, true},     {"HEALTH", 1, true},      {"ANA", 2, true},
      {"R-IOPS", 3, false},  {"R-MiB/s", 14, false},   {"R-P50", 8, false},
      {"R-P99", 4, false},   {"W-IOPS", 5, false},     {"W-MiB/s", 15, false},
      {"W-P50", 9, false},   {"W-P99", 6, false},      {"EWMA-R", 7, false},
      {"WEIGHT", 10, false}, {"FAILOVERS", 12, false}, {"ERRORS", 13, false},
      {"QD", 18, false},     {"CTRL", 11, true},       {"TRANSPORT", 16, true},
      {"ADDRESS", 17, true}};
  return *cols;
}

Row PathCells(const Frame& f, const PathRow& p, bool indent) {
  return {{Clean(absl::StrCat(indent ? "  " : "", p.path)),
           p.health ? std::string(exporters::PathHealthLabel(*p.health)) : "-",
           p.ana_state.empty() ? "-" : Clean(p.ana_state), Rate(f, p.read.iops),
           Mib(f, p.read.mib_per_second), FormatLatency(p.read.p50),
           FormatLatency(p.read.p99), Rate(f, p.write.iops),
           Mib(f, p.write.mib_per_second), FormatLatency(p.write.p50),
           FormatLatency(p.write.p99), FormatLatency(p.ewma_read), Weight(p),
           FormatCount(p.failovers), FormatCount(p.errors),
           p.inflight ? absl::StrCat(*p.inflight) : "-", Clean(p.controller),
           Clean(p.transport), Clean(p.address)},
          PathStyle(p)};
}

// With the datapath's snapshot, two columns after ANA: whether it sends
// I/O to the path, and the path's share of its selector's choices over the
// interval (kept before the write columns on a narrow terminal).
constexpr size_t kDatapathColumnsAt = 3;
const std::vector<Column>& DatapathPathColumns() {
  static const auto* cols = [] {
    auto* c = new std::vector<Column>(PathColumns());
    c->insert(c->begin() + kDatapathColumnsAt,
              {{"DP-STATE", 1, true}, {"SEL%", 5, false}});
    return c;
  }();
  return *cols;
}

std::string Share(const PathRow& p) {
  if (!p.selection_share) return "-";
  return absl::StrFormat("%.0f%%", *p.selection_share * 100);
}

// `r` with the datapath's cells of `p` (empty for a head's line).
Row WithDatapathCells(Row r, const PathRow* p) {
  r.cells.insert(
      r.cells.begin() + kDatapathColumnsAt,
      {p ? Clean(p->datapath_state.value_or("-")) : "", p ? Share(*p) : ""});
  return r;
}

// A head's own line above its paths: its I/O and how many of its paths are
// not healthy.
Row HeadCells(const Frame& f, const HeadRow& h) {
  std::vector<std::string> unwell;
  for (model::PathHealth st :
       {model::PathHealth::kFailed, model::PathHealth::kDegraded,
        model::PathHealth::kIdle}) {
    if (int n = h.paths_by_health[model::Index(st)]; n > 0) {
      unwell.push_back(absl::StrCat(n, " ", exporters::PathHealthLabel(st)));
    }
  }
  Row r{{Clean(h.head), absl::StrJoin(unwell, ","),
         absl::StrCat(h.paths, h.paths == 1 ? " path" : " paths"),
         Rate(f, h.read.iops), Mib(f, h.read.mib_per_second),
         FormatLatency(h.read.p50), FormatLatency(h.read.p99),
         Rate(f, h.write.iops), Mib(f, h.write.mib_per_second),
         FormatLatency(h.write.p50), FormatLatency(h.write.p99),
         h.imbalance ? absl::StrFormat("x%.1f", *h.imbalance) : "", "", "", "",
         "", "", "", ""},
        LineStyle::kNormal};
  if (h.paths_by_health[model::Index(model::PathHealth::kFailed)] > 0) {
    r.style = LineStyle::kBad;
  } else if (!unwell.empty() &&
             h.paths_by_health[model::Index(model::PathHealth::kDegraded)] >
                 0) {
    r.style = LineStyle::kWarn;
  }
  return r;
}

void PathTable(const Frame& f, const TextOptions& o, std::vector<Line>& out) {
  std::vector<Row> rows;
  const bool dp = f.datapath.has_value();
  auto path_row = [&](const PathRow& p, bool indent) {
    Row r = PathCells(f, p, indent);
    return dp ? WithDatapathCells(std::move(r), &p) : r;
  };
  if (o.sort == SortKey::kName) {
    // The tree: each head, then its paths (the frame keeps name order).
    for (const HeadRow& h : f.heads) {
      Row head = HeadCells(f, h);
      rows.push_back(dp ? WithDatapathCells(std::move(head), nullptr) : head);
      for (const PathRow& p : f.paths) {
        if (p.head == h.head) rows.push_back(path_row(p, true));
      }
    }
  } else {
    for (const PathRow& p : f.paths) rows.push_back(path_row(p, false));
  }
  Table(dp ? DatapathPathColumns() : PathColumns(), rows, o.width, out);
  if (f.paths.empty()) {
    out.push_back({Cut(f.devices.empty()
                           ? "(no NVMe paths)"
                           : absl::StrCat("(no NVMe paths; ", f.devices.size(),
                                          " other block devices: the devices "
                                          "view)"),
                       o.width)});
  }
}

void ControllerTable(const Frame& f, const TextOptions& o,
                     std::vector<Line>& out) {
  static const auto* cols =
      new std::vector<Column>{{"CONTROLLER", 0, true}, {"STATE", 1, true},
                              {"PATHS", 9, false},     {"R-IOPS", 3, false},
                              {"W-IOPS", 4, false},    {"PROBE-P50", 6, false},
                              {"PROBE-P99", 2, false}, {"PROBE-FAIL", 5, false},
                              {"RESETS", 7, false},    {"RECONNECTS", 8, false},
                              {"ERRORS", 10, false},   {"SUBSYSTEM", 12, true},
                              {"TRANSPORT", 11, true}, {"ADDRESS", 13, true}};
  std::vector<Row> rows;
  for (const ControllerRow& c : f.controllers) {
    Row r{{Clean(c.controller),
           Clean(absl::StrCat(c.state.empty() ? "-" : c.state,
                              c.unreachable ? " unreachable" : "")),
           absl::StrCat(c.paths), Rate(f, c.read_iops), Rate(f, c.write_iops),
           FormatLatency(c.probe_p50), FormatLatency(c.probe_p99),
           FormatCount(c.probe_failures), FormatCount(c.resets),
           FormatCount(c.reconnects), FormatCount(c.errors), Clean(c.subsystem),
           Clean(c.transport), Clean(c.address)}};
    if (c.unreachable || (c.state != "live" && !c.state.empty())) {
      r.style = LineStyle::kBad;
    } else if ((c.resets && c.resets->interval > 0) ||
               (c.probe_failures && c.probe_failures->interval > 0)) {
      r.style = LineStyle::kWarn;
    }
    rows.push_back(std::move(r));
  }
  Table(*cols, rows, o.width, out);
}

void DeviceTable(const Frame& f, const TextOptions& o, std::vector<Line>& out) {
  static const auto* cols = new std::vector<Column>{
      {"DEVICE", 0, true},   {"R-IOPS", 1, false}, {"R-MiB/s", 6, false},
      {"R-P50", 4, false},   {"R-P99", 2, false},  {"W-IOPS", 3, false},
      {"W-MiB/s", 7, false}, {"W-P50", 8, false},  {"W-P99", 5, false}};
  std::vector<Row> rows;
  for (const DeviceRow& d : f.devices) {
    rows.push_back(
        {{Clean(d.device), Rate(f, d.read.iops), Mib(f, d.read.mib_per_second),
          FormatLatency(d.read.p50), FormatLatency(d.read.p99),
          Rate(f, d.write.iops), Mib(f, d.write.mib_per_second),
          FormatLatency(d.write.p50), FormatLatency(d.write.p99)}});
  }
  Table(*cols, rows, o.width, out);
  if (f.devices.empty()) {
    out.push_back(
        {Cut("(no other block devices: the agent runs with "
             "--devices=nvme or without the eBPF sampler)",
             o.width)});
  }
}

// The datapath's line under the subsystems': its policy, how many paths
// it sends I/O to, its requests and those that waited for a path.
Line DatapathText(const DatapathLine& d, int width) {
  std::string text = absl::StrCat(
      "datapath ", Clean(d.device), "  policy ", Clean(d.policy), "  usable ",
      d.usable, "/", d.paths, "  no-path waits ", FormatCount(d.no_path_waits),
      " timeouts ", FormatCount(d.no_path_timeouts), "  requests ",
      FormatCount(d.requests), " failed ", FormatCount(d.failed_requests));
  LineStyle style = LineStyle::kNormal;
  if (d.usable == 0) {
    style = LineStyle::kBad;
  } else if (d.usable < d.paths || d.no_path_waits.interval > 0 ||
             d.failed_requests.interval > 0) {
    style = LineStyle::kWarn;
  }
  return {Cut(std::move(text), width), style};
}

std::string Title(const Frame& f, const TextOptions& o) {
  std::string t = "pathwise top";
  if (!o.source.empty()) absl::StrAppend(&t, "  ", Clean(o.source));
  // What the reader changes (sort, filter) before what only informs, so
  // that a narrow terminal cuts the latter.
  absl::StrAppend(&t, "  interval ",
                  f.interval_seconds > 0
                      ? absl::StrFormat("%.1fs", f.interval_seconds)
                      : std::string("-"));
  absl::string_view io = exporters::IoSourceLabel(f.io_source);
  absl::StrAppend(&t, "  io ", io.empty() ? "none" : io, "  sort ",
                  SortKeyName(o.sort));
  if (!o.filter.empty()) {
    absl::StrAppend(&t, "  filter \"", Clean(o.filter), "\"");
  }
  absl::StrAppend(&t, "  gen ", f.generation);
  if (f.collected_at != absl::InfinitePast()) {
    absl::StrAppend(&t, "  ",
                    absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", f.collected_at,
                                     absl::UTCTimeZone()));
  }
  return t;
}

}  // namespace

absl::string_view ViewName(View v) {
  switch (v) {
    case View::kPaths:
      return "paths";
    case View::kControllers:
      return "controllers";
    case View::kDevices:
      return "devices";
  }
  return "paths";
}

std::optional<View> ParseView(absl::string_view name) {
  for (View v : {View::kPaths, View::kControllers, View::kDevices}) {
    if (ViewName(v) == name) return v;
  }
  return std::nullopt;
}

std::string FormatLatency(const std::optional<double>& seconds) {
  if (!seconds || !(*seconds >= 0)) return "-";
  const double s = *seconds;
  if (s < 999.5e-6) return absl::StrFormat("%.0fus", s * 1e6);
  if (s < 9.995e-3) return absl::StrFormat("%.2fms", s * 1e3);
  if (s < 99.95e-3) return absl::StrFormat("%.1fms", s * 1e3);
  if (s < 999.5e-3) return absl::StrFormat("%.0fms", s * 1e3);
  return absl::StrFormat("%.2fs", s);
}

std::vector<Line> RenderLines(const Frame& f, const TextOptions& o) {
  std::vector<Line> out;
  out.push_back({Cut(Title(f, o), o.width), LineStyle::kTitle});
  // Neutral: nothing is wrong with the agent, there is nothing to watch.
  if (!f.notice.empty()) {
    out.push_back({Cut(Clean(f.notice), o.width), LineStyle::kNormal});
  }
  for (const std::string& c : f.failed_collectors) {
    out.push_back({Cut(Clean(c), o.width), LineStyle::kBad});
  }
  for (const SubsystemLine& s : f.subsystems) {
    std::string text =
        absl::StrCat(Clean(s.subsystem), "  iopolicy ",
                     s.iopolicy.empty() ? "-" : Clean(s.iopolicy));
    LineStyle style = LineStyle::kNormal;
    if (!s.recommended.empty()) {
      absl::StrAppend(&text, "  advice ", Clean(s.recommended));
      if (!s.reason.empty()) absl::StrAppend(&text, ": ", Clean(s.reason));
      if (s.recommended != s.iopolicy) style = LineStyle::kWarn;
    }
    absl::StrAppend(&text, "  ", Clean(s.nqn));
    out.push_back({Cut(std::move(text), o.width), style});
    if (!s.decision.empty()) {
      out.push_back(
          {Cut(absl::StrCat("  actuator ", Clean(s.decision)), o.width)});
    }
  }
  if (f.datapath) out.push_back(DatapathText(*f.datapath, o.width));
  switch (o.view) {
    case View::kPaths:
      PathTable(f, o, out);
      break;
    case View::kControllers:
      ControllerTable(f, o, out);
      break;
    case View::kDevices:
      DeviceTable(f, o, out);
      break;
  }
  return out;
}

std::string RenderText(const Frame& frame, const TextOptions& options) {
  std::string out;
  for (const Line& l : RenderLines(frame, options)) {
    absl::StrAppend(&out, l.text, "\n");
  }
  return out;
}

}  // namespace pathwise::ui

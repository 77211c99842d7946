// SPDX-License-Identifier: Apache-2.0
#include "lab/league_plot.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "lab/svg.h"

namespace pathwise::lab {
namespace {

constexpr double kWidth = 960, kHeight = 440;
constexpr double kPanelW = 400, kPanelH = 300, kTop = 60;
constexpr double kLeft[2] = {70, 540};

using svg::Escape;

// One panel's y axis: linear in [lo, hi], or log10 when `log`.
struct Axis {
  double lo, hi;
  bool log;
  double Y(double v) const {
    v = std::clamp(v, lo, hi);
    const double f = log ? (std::log10(v) - std::log10(lo)) /
                               (std::log10(hi) - std::log10(lo))
                         : (v - lo) / (hi - lo);
    return kTop + kPanelH * (1 - f);
  }
};

void Panel(std::string& out, int panel, const std::string& heading,
           const Axis& axis, const std::vector<double>& ticks,
           const std::vector<double>& marks) {
  const double x0 = kLeft[panel];
  absl::StrAppendFormat(&out,
                        "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' "
                        "fill='none' stroke='#444'/>\n",
                        x0, kTop, kPanelW, kPanelH);
  absl::StrAppendFormat(&out,
                        "<text x='%.1f' y='%.1f' text-anchor='middle' "
                        "font-weight='bold'>%s</text>\n",
                        x0 + kPanelW / 2, kTop - 10, Escape(heading));
  for (double t : ticks) {
    absl::StrAppendFormat(&out,
                          "<line x1='%.1f' x2='%.1f' y1='%.1f' y2='%.1f' "
                          "stroke='#ddd'/><text x='%.1f' y='%.1f' "
                          "text-anchor='end'>%g</text>\n",
                          x0, x0 + kPanelW, axis.Y(t), axis.Y(t), x0 - 5,
                          axis.Y(t) + 4, t);
  }
  for (double m : marks) {  // the goals' lines
    absl::StrAppendFormat(&out,
                          "<line x1='%.1f' x2='%.1f' y1='%.1f' y2='%.1f' "
                          "stroke='#c00' stroke-dasharray='4 3'/>\n",
                          x0, x0 + kPanelW, axis.Y(m), axis.Y(m));
  }
  for (double f : {0.0, 0.25, 0.5, 0.75, 1.0}) {
    absl::StrAppendFormat(&out,
                          "<text x='%.1f' y='%.1f' text-anchor='middle'>%g"
                          "</text>\n",
                          x0 + f * kPanelW, kTop + kPanelH + 16, f);
  }
  absl::StrAppendFormat(&out,
                        "<text x='%.1f' y='%.1f' text-anchor='middle'>share "
                        "of scenarios at or below</text>\n",
                        x0 + kPanelW / 2, kTop + kPanelH + 34);
}

void Curve(std::string& out, int panel, const Axis& axis, std::vector<double> v,
           const char* colour, bool bold) {
  if (v.empty()) return;
  std::sort(v.begin(), v.end());
  std::string points;
  const double n = static_cast<double>(v.size());
  for (size_t i = 0; i < v.size(); ++i) {  // a step per scenario
    const double y = axis.Y(v[i]);
    absl::StrAppendFormat(&points, "%.1f,%.1f %.1f,%.1f ",
                          kLeft[panel] + kPanelW * i / n, y,
                          kLeft[panel] + kPanelW * (i + 1) / n, y);
  }
  absl::StrAppendFormat(&out,
                        "<polyline fill='none' stroke='%s' stroke-width='%s' "
                        "points='%s'/>\n",
                        colour, bold ? "3" : "1.5", points);
}

}  // namespace

std::string LeaguePlotSvg(const std::string& title,
                          const std::vector<ScenarioOutcome>& family) {
  std::string out = absl::StrFormat(
      "<svg xmlns='http://www.w3.org/2000/svg' width='%g' height='%g' "
      "viewBox='0 0 %g %g' font-family='sans-serif' font-size='12'>\n"
      "<rect width='100%%' height='100%%' fill='white'/>\n"
      "<text x='%g' y='22' text-anchor='middle' font-size='15'>%s</text>\n",
      kWidth, kHeight, kWidth, kHeight, kWidth / 2, Escape(title));
  const Axis tput{0, 1.25, false}, tail{1, 100, true};
  Panel(out, 0, "throughput / best other policy", tput,
        {0, 0.25, 0.5, 0.75, 1, 1.25}, {0.9, 0.97});
  Panel(out, 1, "p99 / the scenario's lowest (log)", tail, {1, 2, 5, 10, 100},
        {1.1});
  const size_t policies = family.empty() ? 0 : family.front().results.size();
  for (size_t i = 0; i < policies; ++i) {
    std::vector<double> vs_other, p99;
    for (const ScenarioOutcome& s : family) {
      if (s.results.size() != policies) continue;
      double best_other = 0;
      double lowest = std::numeric_limits<double>::infinity();
      for (size_t j = 0; j < policies; ++j) {
        if (j != i) best_other = std::max(best_other, Throughput(s.results[j]));
        if (MainOp(s.results[j]).ios > 0) {
          lowest = std::min(lowest, MainOp(s.results[j]).p99_ms);
        }
      }
      if (best_other > 0)
        vs_other.push_back(Throughput(s.results[i]) / best_other);
      if (MainOp(s.results[i]).ios > 0 && lowest > 0 && std::isfinite(lowest)) {
        p99.push_back(MainOp(s.results[i]).p99_ms / lowest);
      }
    }
    const policy::Policy p = family.front().results[i].policy;
    const bool bold = p == policy::Policy::kPathwise;
    const char* colour = svg::Colour(i);
    Curve(out, 0, tput, vs_other, colour, bold);
    Curve(out, 1, tail, p99, colour, bold);
    const double lx =
        kLeft[0] + i * (kWidth - 140) / std::max<size_t>(policies, 1);
    absl::StrAppendFormat(&out,
                          "<line x1='%.1f' x2='%.1f' y1='415' y2='415' "
                          "stroke='%s' stroke-width='%s'/><text x='%.1f' "
                          "y='419'>%s</text>\n",
                          lx, lx + 24, colour, bold ? "3" : "1.5", lx + 28,
                          Escape(policy::PolicyName(p)));
  }
  absl::StrAppend(&out, "</svg>\n");
  return out;
}

}  // namespace pathwise::lab

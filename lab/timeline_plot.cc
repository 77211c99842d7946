// SPDX-License-Identifier: Apache-2.0
#include "lab/timeline_plot.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lab/svg.h"

namespace pathwise::lab {
namespace {

constexpr double kWidth = 960, kHeight = 660;
constexpr double kLeft = 80, kPanelW = 840, kPanelH = 220;
constexpr double kTop[2] = {60, 340};

// The panel's y of `v` in [lo, hi]: linear, or log10 when `log`.
struct Axis {
  double lo, hi;
  bool log;
  double Y(int panel, double v) const {
    v = std::clamp(v, lo, hi);
    const double f = log ? (std::log10(v) - std::log10(lo)) /
                               (std::log10(hi) - std::log10(lo))
                         : (v - lo) / (hi - lo);
    return kTop[panel] + kPanelH * (1 - f);
  }
};

// 1, 2, 5 × 10^k: the smallest at or above v.
double Nice(double v) {
  const double p = std::pow(10, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * p >= v) return m * p;
  }
  return 10 * p;
}

void Frame(std::string& out, int panel, const std::string& heading,
           const Axis& axis, const std::vector<double>& ticks,
           double duration_s) {
  const double top = kTop[panel];
  absl::StrAppendFormat(&out,
                        "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' "
                        "fill='none' stroke='#444'/>\n",
                        kLeft, top, kPanelW, kPanelH);
  absl::StrAppendFormat(&out,
                        "<text x='%.1f' y='%.1f' text-anchor='middle' "
                        "font-weight='bold'>%s</text>\n",
                        kLeft + kPanelW / 2, top - 10, svg::Escape(heading));
  for (double t : ticks) {
    const double y = axis.Y(panel, t);
    absl::StrAppendFormat(&out,
                          "<line x1='%.1f' x2='%.1f' y1='%.1f' y2='%.1f' "
                          "stroke='#ddd'/><text x='%.1f' y='%.1f' "
                          "text-anchor='end'>%g</text>\n",
                          kLeft, kLeft + kPanelW, y, y, kLeft - 5, y + 4, t);
  }
  for (int k = 0; k <= 10; ++k) {
    absl::StrAppendFormat(&out,
                          "<text x='%.1f' y='%.1f' text-anchor='middle'>%g"
                          "</text>\n",
                          kLeft + kPanelW * k / 10, top + kPanelH + 16,
                          duration_s * k / 10);
  }
  absl::StrAppendFormat(&out,
                        "<text x='%.1f' y='%.1f' text-anchor='middle'>"
                        "simulated time (s)</text>\n",
                        kLeft + kPanelW / 2, top + kPanelH + 32);
}

// The bins' values as polylines; negative values (nothing completed) break
// the line.
void Lines(std::string& out, int panel, const Axis& axis,
           const std::vector<double>& v, double bin_s, double duration_s,
           const char* colour) {
  std::string points;
  auto flush = [&] {
    if (!points.empty()) {
      absl::StrAppendFormat(&out,
                            "<polyline fill='none' stroke='%s' "
                            "stroke-width='1.5' points='%s'/>\n",
                            colour, points);
    }
    points.clear();
  };
  for (size_t b = 0; b < v.size(); ++b) {
    const double mid = (static_cast<double>(b) + 0.5) * bin_s;
    if (mid > duration_s) break;
    if (v[b] < 0) {
      flush();
      continue;
    }
    absl::StrAppendFormat(&points, "%.1f,%.1f ",
                          kLeft + kPanelW * mid / duration_s,
                          axis.Y(panel, v[b]));
  }
  flush();
}

}  // namespace

std::string TimelinePlotSvg(const Scenario& sc,
                            const std::vector<policy::Policy>& policies,
                            const std::vector<Phase>& phases,
                            const std::vector<Timeline>& timelines) {
  const double duration_s = static_cast<double>(sc.duration_ns) / 1e9;
  std::string out = absl::StrFormat(
      "<svg xmlns='http://www.w3.org/2000/svg' width='%g' height='%g' "
      "viewBox='0 0 %g %g' font-family='sans-serif' font-size='12'>\n"
      "<rect width='100%%' height='100%%' fill='white'/>\n"
      "<text x='%g' y='22' text-anchor='middle' font-size='15'>%s</text>\n",
      kWidth, kHeight, kWidth, kHeight, kWidth / 2,
      svg::Escape(absl::StrCat("pathwise lab: scenario ", sc.name, ", ",
                               policies.size(), " policies")));
  double max_mib = 0, min_p99 = 0, max_p99 = 0;
  for (const Timeline& t : timelines) {
    for (double v : t.mib_s) max_mib = std::max(max_mib, v);
    for (double v : t.p99_ms) {
      if (v <= 0) continue;
      min_p99 = min_p99 == 0 ? v : std::min(min_p99, v);
      max_p99 = std::max(max_p99, v);
    }
  }
  const Axis tput{0, Nice(std::max(max_mib, 1.0)), false};
  const double lo =
      min_p99 > 0 ? std::pow(10, std::floor(std::log10(min_p99))) : 0.1;
  const Axis tail{lo, std::max(Nice(std::max(max_p99, lo)), lo * 10), true};
  std::vector<double> tput_ticks, tail_ticks;
  for (int k = 0; k <= 4; ++k) tput_ticks.push_back(tput.hi * k / 4);
  for (double d = tail.lo; d <= tail.hi * 1.0001; d *= 10) {
    tail_ticks.push_back(d);
  }
  Frame(out, 0, "throughput (MiB/s, reads and writes)", tput, tput_ticks,
        duration_s);
  Frame(out, 1, "p99 latency (ms, log)", tail, tail_ticks, duration_s);
  for (size_t p = 1; p < phases.size(); ++p) {
    const double x = kLeft + kPanelW * (phases[p].start_ns / 1e9) / duration_s;
    absl::StrAppendFormat(&out, "<g class='phase-boundary'>");
    for (int panel = 0; panel < 2; ++panel) {
      absl::StrAppendFormat(&out,
                            "<line x1='%.1f' x2='%.1f' y1='%.1f' y2='%.1f' "
                            "stroke='#c00' stroke-dasharray='4 3'/>",
                            x, x, kTop[panel], kTop[panel] + kPanelH);
    }
    absl::StrAppendFormat(&out,
                          "<text x='%.1f' y='%.1f' fill='#c00' "
                          "font-size='10'>%s</text></g>\n",
                          x + 3, kTop[0] + 12, svg::Escape(phases[p].label));
  }
  for (size_t i = 0; i < timelines.size() && i < policies.size(); ++i) {
    const Timeline& t = timelines[i];
    const std::string name(policy::PolicyName(policies[i]));
    const char* colour = svg::Colour(i);
    const double bin_s = static_cast<double>(t.bin_ns) / 1e9;
    absl::StrAppendFormat(&out, "<g class='series' data-policy='%s'>\n",
                          svg::Escape(name));
    Lines(out, 0, tput, t.mib_s, bin_s, duration_s, colour);
    Lines(out, 1, tail, t.p99_ms, bin_s, duration_s, colour);
    const double lx =
        kLeft + i * (kPanelW / std::max<size_t>(policies.size(), 1));
    absl::StrAppendFormat(&out,
                          "<line x1='%.1f' x2='%.1f' y1='%.1f' y2='%.1f' "
                          "stroke='%s' stroke-width='2'/><text x='%.1f' "
                          "y='%.1f'>%s%s</text>\n</g>\n",
                          lx, lx + 24, kHeight - 24, kHeight - 24, colour,
                          lx + 28, kHeight - 20, svg::Escape(name),
                          policy::IsKernelIopolicy(policies[i]) ? "" : "*");
  }
  absl::StrAppendFormat(&out,
                        "<text x='%.1f' y='%.1f' font-size='10'>* not a "
                        "kernel iopolicy</text>\n",
                        kLeft, kHeight - 4);
  absl::StrAppend(&out, "</svg>\n");
  return out;
}

}  // namespace pathwise::lab

// SPDX-License-Identifier: Apache-2.0
// What the lab's SVG plots share (lab/league_plot.h, lab/timeline_plot.h):
// text escaping and the series colours.
#ifndef PATHWISE_LAB_SVG_H_
#define PATHWISE_LAB_SVG_H_

#include <iterator>
#include <string>

#include "absl/strings/string_view.h"

namespace pathwise::lab::svg {

// Distinct on white and for the common colour-vision deficiencies (the
// Okabe-Ito palette).
inline constexpr const char* kColours[] = {"#999999", "#E69F00", "#56B4E9",
                                           "#009E73", "#D55E00", "#0072B2",
                                           "#CC79A7", "#000000"};
inline const char* Colour(size_t i) {
  return kColours[i % std::size(kColours)];
}

// Text or an attribute value as XML has it.
inline std::string Escape(absl::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace pathwise::lab::svg

#endif  // PATHWISE_LAB_SVG_H_

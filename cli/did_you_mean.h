// SPDX-License-Identifier: Apache-2.0
// "Did you mean": the candidate name closest to a misspelled word, by edit
// distance (Levenshtein), for the command line's usage errors.
#ifndef PATHWISE_CLI_DID_YOU_MEAN_H_
#define PATHWISE_CLI_DID_YOU_MEAN_H_

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace pathwise::cli {

inline size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// A likely meant name for the misspelled `word`: the candidate (compared
// whole, and without its group: "sysfs" for "path.sysfs") with the fewest
// edits, if those are few for the word's length.
struct Candidate {
  std::string compared;  // a name, as the argument is spelled
  std::string meant;     // what to suggest
};
inline std::optional<std::string> Closest(
    absl::string_view word, const std::vector<Candidate>& candidates) {
  std::optional<std::string> best;
  size_t best_distance = std::max<size_t>(2, word.size() / 3) + 1;
  for (const Candidate& c : candidates) {
    size_t d = EditDistance(word, c.compared);
    if (const size_t dot = c.compared.rfind('.'); dot != std::string::npos) {
      d = std::min(d, EditDistance(word, c.compared.substr(dot + 1)));
    }
    if (d < best_distance) {
      best_distance = d;
      best = c.meant;
    }
  }
  return best;
}

}  // namespace pathwise::cli

#endif  // PATHWISE_CLI_DID_YOU_MEAN_H_

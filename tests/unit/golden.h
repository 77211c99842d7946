// SPDX-License-Identifier: Apache-2.0
// Golden-file comparison. Regenerate every golden file with
//   PATHWISE_UPDATE_GOLDEN=1 ctest --test-dir build -L unit
// (see tests/unit/golden/README.md), then review the diff.
#ifndef PATHWISE_TESTS_UNIT_GOLDEN_H_
#define PATHWISE_TESTS_UNIT_GOLDEN_H_

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace pathwise::testing {

inline std::string GoldenPath(const std::string& name) {
  return std::string(PATHWISE_GOLDEN_DIR) + "/" + name;
}

inline void ExpectMatchesGolden(const std::string& actual,
                                const std::string& name) {
  const std::string path = GoldenPath(name);
  if (const char* u = std::getenv("PATHWISE_UPDATE_GOLDEN"); u && *u == '1') {
    std::ofstream(path) << actual;
    return;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "missing golden file " << path
                         << " (PATHWISE_UPDATE_GOLDEN=1 creates it)";
  std::stringstream want;
  want << in.rdbuf();
  EXPECT_EQ(actual, want.str())
      << "exposition differs from " << path
      << "; if the change is intended, regenerate with "
         "PATHWISE_UPDATE_GOLDEN=1 and review the diff";
}

}  // namespace pathwise::testing

#endif  // PATHWISE_TESTS_UNIT_GOLDEN_H_

// SPDX-License-Identifier: Apache-2.0
// `promtool check metrics` over an exposition, for the tests of each
// family builder. promtool missing fails the test (it is a declared
// dependency), never skips it.
#ifndef PATHWISE_TESTS_UNIT_PROMTOOL_H_
#define PATHWISE_TESTS_UNIT_PROMTOOL_H_

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace pathwise::testing_util {

// Writes `text` to a temporary file named `name` and expects promtool to
// accept it, with promtool's complaints in the failure message.
inline void ExpectPromtoolAccepts(const std::string& text,
                                  const std::string& name) {
  // A file of its own: ctest runs tests in parallel, and tests may share
  // a name.
  std::string path = ::testing::TempDir() + "/" + name + "-XXXXXX";
  const int fd = mkstemp(path.data());
  ASSERT_GE(fd, 0) << path;
  close(fd);
  std::ofstream(path) << text;
  const std::string cmd = "promtool check metrics < " + path + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof(buf), p) != nullptr) out += buf;
  const int rc = pclose(p);
  ASSERT_NE(rc, 127 << 8) << "promtool not installed";
  EXPECT_EQ(rc, 0) << out;
  unlink(path.c_str());
}

}  // namespace pathwise::testing_util

#endif  // PATHWISE_TESTS_UNIT_PROMTOOL_H_

// SPDX-License-Identifier: Apache-2.0
// The base of the tests that read captured sysfs trees (tests/fixtures/sysfs)
// through the collectors: each test process enters a private mount
// namespace and binds a tree over /sys (for the readers of /sys itself), as the
// agent does with --path.sysfs (collectors/sysfs_namespace.h). Needs root
// (CAP_SYS_ADMIN); without it the tests fail, they do not skip.
#ifndef PATHWISE_TESTS_UNIT_COLLECTORS_SYS_FIXTURE_H_
#define PATHWISE_TESTS_UNIT_COLLECTORS_SYS_FIXTURE_H_

#include <stdlib.h>

#include <filesystem>
#include <string>

#include "absl/status/status.h"
#include "collectors/sysfs_namespace.h"
#include "gtest/gtest.h"

namespace pathwise::testing {

// The captured tree `name` (its sys/ directory).
inline std::string FixtureDir(const std::string& name) {
  return std::string(PATHWISE_SYSFS_FIXTURES) + "/" + name + "/sys";
}

class SysFixtureTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    static absl::Status ns = collectors::EnterPrivateMountNamespace();
    ns_status_ = ns;
  }

  void SetUp() override {
    ASSERT_TRUE(ns_status_.ok())
        << "these tests need root to bind fixtures over /sys: " << ns_status_;
  }

  void TearDown() override {
    for (; bound_ > 0; --bound_) EXPECT_TRUE(collectors::UnbindSys().ok());
    if (!tmp_.empty()) std::filesystem::remove_all(tmp_);
  }

  // Presents `root` at /sys (undone in TearDown).
  void BindOverSys(const std::string& root) {
    absl::Status s = collectors::BindOverSys(root);
    EXPECT_TRUE(s.ok()) << s;
    if (s.ok()) ++bound_;
  }

  // A writable copy of fixture `name` (symlinks preserved) to break things
  // in; removed in TearDown.
  std::string CopyOf(const std::string& name) {
    char tmpl[] = "/tmp/pathwise-fixture-XXXXXX";
    EXPECT_NE(mkdtemp(tmpl), nullptr);
    tmp_ = tmpl;
    const std::string dst = tmp_ + "/sys";
    std::filesystem::copy(FixtureDir(name), dst,
                          std::filesystem::copy_options::recursive |
                              std::filesystem::copy_options::copy_symlinks);
    return dst;
  }

  inline static absl::Status ns_status_;
  int bound_ = 0;    // binds over /sys to undo
  std::string tmp_;  // a directory to remove
};

}  // namespace pathwise::testing

#endif  // PATHWISE_TESTS_UNIT_COLLECTORS_SYS_FIXTURE_H_

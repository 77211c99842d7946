// SPDX-License-Identifier: Apache-2.0
// Checks shared by the command-line tests: a parse that must succeed, and
// one that must fail with a one-line usage error (exit 2 in the binary).
#ifndef PATHWISE_TESTS_UNIT_USAGE_ERROR_H_
#define PATHWISE_TESTS_UNIT_USAGE_ERROR_H_

#include <gtest/gtest.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace pathwise::testing {

// The parsed value; fails the test (and returns T{}) if parsing failed.
template <typename T>
T ParsedOrDefault(const absl::StatusOr<T>& o) {
  EXPECT_TRUE(o.ok()) << o.status();
  return o.ok() ? *o : T{};
}

// The usage error's message; fails the test if `o` parsed, if the error is
// not InvalidArgument or if it spans more than one line.
template <typename T>
std::string UsageError(const absl::StatusOr<T>& o) {
  EXPECT_FALSE(o.ok()) << "parsed";
  if (o.ok()) return "";
  EXPECT_EQ(o.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(o.status().message());
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  return message;
}

}  // namespace pathwise::testing

#endif  // PATHWISE_TESTS_UNIT_USAGE_ERROR_H_

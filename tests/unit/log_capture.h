// SPDX-License-Identifier: Apache-2.0
// Captures spdlog's default logger output for assertions.
#ifndef PATHWISE_TESTS_UNIT_LOG_CAPTURE_H_
#define PATHWISE_TESTS_UNIT_LOG_CAPTURE_H_

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "spdlog/sinks/ostream_sink.h"
#include "spdlog/spdlog.h"

namespace pathwise::testing {

class LogCapture {
 public:
  LogCapture() : previous_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_st>(out_);
    auto logger = std::make_shared<spdlog::logger>("capture", sink);
    logger->set_pattern("%l %v");
    logger->set_level(spdlog::level::info);
    spdlog::set_default_logger(logger);
  }
  ~LogCapture() { spdlog::set_default_logger(previous_); }

  std::vector<std::string> Lines() const {
    return absl::StrSplit(out_.str(), '\n', absl::SkipEmpty());
  }

 private:
  std::ostringstream out_;
  std::shared_ptr<spdlog::logger> previous_;
};

}  // namespace pathwise::testing

#endif  // PATHWISE_TESTS_UNIT_LOG_CAPTURE_H_

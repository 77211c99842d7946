// SPDX-License-Identifier: Apache-2.0
#include "agent/log_format.h"

#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "spdlog/details/log_msg.h"

namespace pathwise::agent {
namespace {

std::string LevelName(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
    case spdlog::level::debug:
      return "debug";
    case spdlog::level::info:
      return "info";
    case spdlog::level::warn:
      return "warn";
    default:
      return "error";
  }
}

// A JSON string: quoted and escaped, bytes that are not UTF-8 replaced.
std::string Quoted(const std::string& text) {
  return nlohmann::json(text).dump(-1, ' ', false,
                                   nlohmann::json::error_handler_t::replace);
}

class LineFormatter : public spdlog::formatter {
 public:
  explicit LineFormatter(bool json) : json_(json) {}

  void format(const spdlog::details::log_msg& msg,
              spdlog::memory_buf_t& dest) override {
    const std::string ts =
        absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::FromChrono(msg.time),
                         absl::UTCTimeZone());
    const std::string level = LevelName(msg.level);
    const std::string text(msg.payload.data(), msg.payload.size());
    std::string line;
    if (json_) {
      line = "{\"ts\":\"" + ts + "\",\"level\":\"" + level +
             "\",\"msg\":" + Quoted(text) + "}\n";
    } else {
      line = "ts=" + ts + " level=" + level + " msg=" + Quoted(text) + "\n";
    }
    dest.append(line.data(), line.data() + line.size());
  }

  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<LineFormatter>(json_);
  }

 private:
  bool json_;
};

}  // namespace

std::unique_ptr<spdlog::formatter> MakeLogFormatter(absl::string_view format) {
  return std::make_unique<LineFormatter>(format == "json");
}

}  // namespace pathwise::agent

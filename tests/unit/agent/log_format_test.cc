// SPDX-License-Identifier: Apache-2.0
// --log.format: the lines the binary's logger writes, captured and parsed
// back: logfmt by a logfmt reader (below), JSON by nlohmann-json; both
// carry an RFC 3339 UTC timestamp, the level and the message unchanged
// (bytes that are not UTF-8 as U+FFFD).
#include "agent/log_format.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "spdlog/logger.h"
#include "spdlog/sinks/ostream_sink.h"

namespace pathwise::agent {
namespace {

// Messages a log line must survive: quotes, backslashes, '=', a newline,
// an escape character and a byte that is not UTF-8.
const std::vector<std::string> kMessages = {
    "serving on :9877 (port 9877), interval 1s",
    "iopolicy decision: subsystem=nvme-subsys0 reason=\"restore on exit\"",
    "path C:\\dir key=value",
    "two\nlines\tand \x1b[31mcolour",
    "serial SN\xff"
    "42",
};
const char kReplaced[] =
    "serial SN\xef\xbf\xbd"
    "42";  // U+FFFD

// The lines `format` writes for kMessages, the first at info, then warn,
// error and debug in turn.
std::vector<std::string> Lines(const std::string& format) {
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_st>(out);
  spdlog::logger logger("test", sink);
  logger.set_formatter(MakeLogFormatter(format));
  logger.set_level(spdlog::level::debug);
  const spdlog::level::level_enum levels[] = {
      spdlog::level::info, spdlog::level::warn, spdlog::level::err,
      spdlog::level::debug};
  for (size_t i = 0; i < kMessages.size(); ++i) {
    logger.log(levels[i % 4], "{}", kMessages[i]);
  }
  logger.flush();
  std::vector<std::string> lines = absl::StrSplit(out.str(), '\n');
  EXPECT_EQ(lines.back(), "");  // every line ends with '\n'
  lines.pop_back();
  return lines;
}

const char* const kLevels[] = {"info", "warn", "error", "debug"};

std::string Expected(size_t i) { return i == 4 ? kReplaced : kMessages[i]; }

// ts: RFC 3339 with milliseconds and a zone (UTC, "Z"), within a minute
// of now.
void ExpectTimestamp(const std::string& ts) {
  EXPECT_TRUE(std::regex_match(
      ts, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")))
      << ts;
  absl::Time t;
  std::string err;
  ASSERT_TRUE(absl::ParseTime(absl::RFC3339_full, ts, &t, &err)) << err;
  EXPECT_LT(absl::AbsDuration(absl::Now() - t), absl::Minutes(1)) << ts;
}

// A logfmt line as go-logfmt reads it: key=value pairs separated by
// spaces; a quoted value is a JSON-style string (\" \\ \n \uXXXX).
std::map<std::string, std::string> ReadLogfmt(const std::string& line) {
  std::map<std::string, std::string> out;
  size_t i = 0;
  while (i < line.size()) {
    const size_t eq = line.find('=', i);
    EXPECT_NE(eq, std::string::npos) << line;
    if (eq == std::string::npos) break;
    const std::string key = line.substr(i, eq - i);
    EXPECT_EQ(key.find(' '), std::string::npos) << line;
    size_t end;
    std::string value;
    if (eq + 1 < line.size() && line[eq + 1] == '"') {
      end = eq + 2;
      while (end < line.size() && line[end] != '"') {
        end += line[end] == '\\' ? 2 : 1;
      }
      ++end;  // past the closing quote
      value = nlohmann::json::parse(line.substr(eq + 1, end - eq - 1))
                  .get<std::string>();
    } else {
      end = std::min(line.find(' ', eq), line.size());
      value = line.substr(eq + 1, end - eq - 1);
    }
    EXPECT_TRUE(out.emplace(key, value).second) << "repeated key: " << line;
    i = end;
    if (i < line.size()) {
      EXPECT_EQ(line[i], ' ') << line;
      ++i;
    }
  }
  return out;
}

TEST(LogFormatTest, LogfmtLinesParse) {
  const std::vector<std::string> lines = Lines("logfmt");
  ASSERT_EQ(lines.size(), kMessages.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    SCOPED_TRACE(lines[i]);
    EXPECT_EQ(lines[i].rfind("ts=", 0), 0u);
    std::map<std::string, std::string> kv = ReadLogfmt(lines[i]);
    EXPECT_EQ(kv.size(), 3u);
    ExpectTimestamp(kv["ts"]);
    EXPECT_EQ(kv["level"], kLevels[i % 4]);
    EXPECT_EQ(kv["msg"], Expected(i));
  }
}

TEST(LogFormatTest, JsonLinesParse) {
  const std::vector<std::string> lines = Lines("json");
  ASSERT_EQ(lines.size(), kMessages.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    SCOPED_TRACE(lines[i]);
    const nlohmann::json j = nlohmann::json::parse(lines[i]);
    ASSERT_TRUE(j.is_object());
    EXPECT_EQ(j.size(), 3u);
    ExpectTimestamp(j.at("ts").get<std::string>());
    EXPECT_EQ(j.at("level"), kLevels[i % 4]);
    EXPECT_EQ(j.at("msg").get<std::string>(), Expected(i));
  }
}

}  // namespace
}  // namespace pathwise::agent

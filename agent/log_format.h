// SPDX-License-Identifier: Apache-2.0
// The binary's log lines (--log.format): logfmt, as the Prometheus
// exporters write it by default,
//   ts=2026-12-04T21:03:05.123Z level=info msg="serving on :9877"
// or JSON, one object per line,
//   {"ts":"2026-12-04T21:03:05.123Z","level":"info","msg":"serving on :9877"}
// ts is RFC 3339 in UTC with milliseconds. A message's quotes, control
// characters and bytes that are not UTF-8 (U+FFFD) are escaped as JSON
// strings escape them, which logfmt readers also decode.
#ifndef PATHWISE_AGENT_LOG_FORMAT_H_
#define PATHWISE_AGENT_LOG_FORMAT_H_

#include <memory>

#include "absl/strings/string_view.h"
#include "spdlog/formatter.h"

namespace pathwise::agent {

// `format` is "logfmt" or "json" (anything else: logfmt).
std::unique_ptr<spdlog::formatter> MakeLogFormatter(absl::string_view format);

}  // namespace pathwise::agent

#endif  // PATHWISE_AGENT_LOG_FORMAT_H_

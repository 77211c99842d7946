// SPDX-License-Identifier: Apache-2.0
// Fuzzes the `pathwise` command line (agent/cli.h ParseArgs, which covers
// `pathwise lab`'s flags too) on an argv split from the input at NUL bytes,
// and the --web.listen-address syntax (exporters/http_server.h) on each
// argument. ParseArgs must return an error, never throw or crash.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "agent/cli.h"
#include "exporters/listen_socket.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> args;
  std::string cur;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == '\0') {
      args.push_back(std::move(cur));
      cur.clear();
    } else {
      cur.push_back(static_cast<char>(data[i]));
    }
  }
  if (!cur.empty()) args.push_back(std::move(cur));
  if (args.size() > 64) return 0;  // argv length adds nothing past this

  absl::StatusOr<pathwise::agent::Options> o = pathwise::agent::ParseArgs(args);
  if (!o.ok()) {
    // The contract: one line.
    if (o.status().message().find('\n') != absl::string_view::npos) {
      __builtin_trap();
    }
  } else if (o->command == pathwise::agent::Command::kServe) {
    if (!pathwise::exporters::ParseListenAddress(o->listen_address).ok()) {
      __builtin_trap();  // accepted by the flag, refused by the server
    }
  }
  for (const std::string& a : args) {
    (void)pathwise::exporters::ParseListenAddress(a);
  }
  return 0;
}

// SPDX-License-Identifier: Apache-2.0
#include "agent/listen_address.h"

#include <string>

#include "absl/status/statusor.h"
#include "exporters/listen_socket.h"

namespace pathwise::agent {

std::string ParseListenAddress(absl::string_view text, std::string* v) {
  *v = std::string(text);
  if (text.empty()) return "must not be empty";
  absl::StatusOr<exporters::ListenAddress> a =
      exporters::ParseListenAddress(text);
  return a.ok() ? "" : std::string(a.status().message());
}

}  // namespace pathwise::agent

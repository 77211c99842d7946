// SPDX-License-Identifier: Apache-2.0
// --web.listen-address: the [host]:port syntax the HTTP server accepts, checked
// when the flags are parsed so that a bad address is a usage error (exit 2)
// like any other bad flag, not a failure to start.
#ifndef PATHWISE_AGENT_LISTEN_ADDRESS_H_
#define PATHWISE_AGENT_LISTEN_ADDRESS_H_

#include <string>

#include "absl/strings/string_view.h"

namespace pathwise::agent {

// Stores `text` in `*v`; returns "" or what is wrong with it.
std::string ParseListenAddress(absl::string_view text, std::string* v);

}  // namespace pathwise::agent

#endif  // PATHWISE_AGENT_LISTEN_ADDRESS_H_

// SPDX-License-Identifier: Apache-2.0
// Version and source revision of this build (generated at build time by
// agent/version.cmake into the build tree as version.cc).
#ifndef PATHWISE_AGENT_VERSION_H_
#define PATHWISE_AGENT_VERSION_H_

namespace pathwise::agent {

extern const char kVersion[];
extern const char kRevision[];

}  // namespace pathwise::agent

#endif  // PATHWISE_AGENT_VERSION_H_

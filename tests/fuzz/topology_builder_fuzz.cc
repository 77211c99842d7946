// SPDX-License-Identifier: Apache-2.0
// Fuzzes the topology builder (collectors/topology_builder.h) on a raw scan
// generated from the input (raw_topology.h): every attribute parser in the
// context of the joins, sorting and error accumulation, plus the invariants
// the rest of the agent relies on.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "collectors/topology_builder.h"
#include "tests/fuzz/raw_topology.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const pathwise::collectors::RawTopology raw =
      pathwise::fuzz::ConsumeRawTopology(in);
  const pathwise::collectors::BuiltTopology built =
      pathwise::collectors::BuildTopology(raw);
  const pathwise::model::Topology& t = built.topology;
  // Scan errors are reported.
  if (!raw.scan_errors.empty() && built.status.ok()) __builtin_trap();
  // Names are unique (they are series labels) when the scan's were: a
  // kernel scan never lists a controller or a path twice.
  std::set<std::string> raw_controllers, raw_paths;
  bool raw_unique = true;
  for (const auto& c : raw.controllers) {
    raw_unique &= raw_controllers.insert(c.name).second;
  }
  for (const auto& p : raw.paths) raw_unique &= raw_paths.insert(p.name).second;
  // Every path is under a head and a controller of the result.
  std::set<std::string> heads, controllers, paths;
  for (const auto& h : t.heads) {
    if (!heads.insert(h.name).second) __builtin_trap();
  }
  for (const auto& c : t.controllers) {
    if (!controllers.insert(c.name).second && raw_unique) __builtin_trap();
  }
  for (const auto& p : t.paths) {
    if (!paths.insert(p.name).second && raw_unique) __builtin_trap();
    if (!heads.count(p.head) || !controllers.count(p.controller)) {
      __builtin_trap();
    }
    if (t.FindPath(p.name) == nullptr) __builtin_trap();
  }
  return 0;
}

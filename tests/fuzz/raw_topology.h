// SPDX-License-Identifier: Apache-2.0
// Builds a collectors::RawTopology (what one sysfs scan read) from
// fuzz bytes, for the targets that feed the topology builder. Names come
// mostly from a small well-formed set (nvme<S>c<C>n<N>, nvme<C>,
// nvme-subsys<S>) so that joins between paths, controllers, subsystems and
// heads happen; sometimes they are arbitrary bytes. Attribute values are
// arbitrary bytes, or a read error.
#ifndef PATHWISE_TESTS_FUZZ_RAW_TOPOLOGY_H_
#define PATHWISE_TESTS_FUZZ_RAW_TOPOLOGY_H_

#include <fuzzer/FuzzedDataProvider.h>

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "collectors/topology_builder.h"

namespace pathwise::fuzz {

inline std::string SmallIndex(FuzzedDataProvider& in) {
  return std::to_string(in.ConsumeIntegralInRange<int>(0, 3));
}

inline std::string SubsystemName(FuzzedDataProvider& in) {
  if (in.ConsumeIntegralInRange<int>(0, 15) == 0) {
    return in.ConsumeRandomLengthString(24);
  }
  return absl::StrCat("nvme-subsys", SmallIndex(in));
}

inline std::string ControllerName(FuzzedDataProvider& in) {
  if (in.ConsumeIntegralInRange<int>(0, 15) == 0) {
    return in.ConsumeRandomLengthString(24);
  }
  return absl::StrCat("nvme", SmallIndex(in));
}

inline std::string PathName(FuzzedDataProvider& in) {
  if (in.ConsumeIntegralInRange<int>(0, 7) == 0) {
    return in.ConsumeRandomLengthString(24);
  }
  return absl::StrCat("nvme", SmallIndex(in), "c", SmallIndex(in), "n",
                      SmallIndex(in));
}

inline collectors::RawAttr Attr(FuzzedDataProvider& in) {
  if (in.ConsumeIntegralInRange<int>(0, 15) == 0) {
    return absl::NotFoundError("fuzz: no such attribute");
  }
  return in.ConsumeRandomLengthString(48);
}

inline std::optional<std::string> OptString(FuzzedDataProvider& in) {
  if (!in.ConsumeBool()) return std::nullopt;
  return in.ConsumeRandomLengthString(48);
}

inline collectors::RawTopology ConsumeRawTopology(FuzzedDataProvider& in) {
  collectors::RawTopology raw;
  if (in.ConsumeIntegralInRange<int>(0, 7) == 0) {
    raw.scan_errors.push_back(absl::InternalError("fuzz: scan failed"));
  }
  const int subsystems = in.ConsumeIntegralInRange<int>(0, 4);
  for (int i = 0; i < subsystems; ++i) {
    collectors::RawSubsystem s;
    s.name = SubsystemName(in);
    s.nqn = in.ConsumeRandomLengthString(48);
    s.iopolicy = Attr(in);
    s.model = Attr(in);
    s.serial = Attr(in);
    raw.subsystems.push_back(std::move(s));
  }
  const int controllers = in.ConsumeIntegralInRange<int>(0, 6);
  for (int i = 0; i < controllers; ++i) {
    collectors::RawController c;
    c.name = ControllerName(in);
    c.subsystem = SubsystemName(in);
    c.transport = OptString(in);
    c.address = OptString(in);
    c.state = OptString(in);
    c.numa_node = OptString(in);
    c.queue_count = OptString(in);
    c.traddr = in.ConsumeRandomLengthString(24);
    c.trsvcid = in.ConsumeRandomLengthString(8);
    c.host_traddr = in.ConsumeRandomLengthString(24);
    c.host_iface = in.ConsumeRandomLengthString(16);
    c.cntlid = Attr(in);
    raw.controllers.push_back(std::move(c));
  }
  const int paths = in.ConsumeIntegralInRange<int>(0, 10);
  for (int i = 0; i < paths; ++i) {
    collectors::RawPath p;
    p.name = PathName(in);
    p.controller = ControllerName(in);
    p.ana_state = OptString(in);
    if (in.ConsumeBool()) p.dev = Attr(in);
    raw.paths.push_back(std::move(p));
  }
  // Heads under the names the paths imply, plus the odd stray one.
  for (const collectors::RawPath& p : raw.paths) {
    absl::StatusOr<std::string> head = collectors::HeadNameOfPath(p.name);
    if (!head.ok() || in.ConsumeIntegralInRange<int>(0, 7) == 0) continue;
    raw.heads[*head] = {Attr(in), Attr(in)};
  }
  if (in.ConsumeBool()) {
    raw.heads[in.ConsumeRandomLengthString(16)] = {Attr(in), Attr(in)};
  }
  return raw;
}

}  // namespace pathwise::fuzz

#endif  // PATHWISE_TESTS_FUZZ_RAW_TOPOLOGY_H_

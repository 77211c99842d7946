// SPDX-License-Identifier: Apache-2.0
// Fuzzes the `pathwise lab` scenario parser (lab/scenario.h) and its value
// parsers. Only parsing: running the simulation on an accepted scenario is
// the lab's own concern (its limits on job counts and simulated time are
// checked by its parser and its tests).
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "lab/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<pathwise::lab::Scenario> sc =
      pathwise::lab::ParseScenario(text, "fuzz.scn");
  if (sc.ok()) {
    // An accepted scenario is self-consistent: events name existing paths,
    // times and delays are not negative, rates are finite, probabilities
    // are probabilities.
    auto check = [](bool ok) {
      if (!ok) __builtin_trap();
    };
    check(sc->duration_ns > 0);
    check(sc->workload.read_fraction >= 0 && sc->workload.read_fraction <= 1);
    check(sc->workload.cpu_per_io_ns >= 0 && sc->workload.host_latency_ns >= 0);
    for (const pathwise::lab::PathSpec& p : sc->paths) {
      check(p.latency_ns >= 0 && p.spread_ns >= 0 && p.service_ns >= 0);
      check(p.write_service_ns >= -1);  // -1: the read's
      check(std::isfinite(p.bandwidth) && p.bandwidth >= 0);
      for (double d : {p.read_bandwidth, p.write_bandwidth}) {
        check(d == -1 || (std::isfinite(d) && d >= 0));  // -1: bandwidth
      }
    }
    for (const pathwise::lab::Event& e : sc->events) {
      check(e.path >= 0 && static_cast<size_t>(e.path) < sc->paths.size());
      check(e.at_ns >= 0 && e.delay_ns >= 0);
      check(e.loss >= 0 && e.loss <= 1);
    }
  }
  // Every line also goes through each value parser on its own, so that the
  // unit grammar is explored without the section structure around it.
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    (void)pathwise::lab::ParseDuration(line);
    (void)pathwise::lab::ParseSize(line);
    (void)pathwise::lab::ParseBandwidth(line);
    (void)pathwise::lab::ParseFraction(line);
  }
  return 0;
}

// SPDX-License-Identifier: Apache-2.0
#include "lab/target.h"

#include <cmath>

namespace pathwise::lab {
namespace {

int64_t SerializationNs(double rate, uint32_t bs) {
  return rate > 0 ? std::max<int64_t>(1, std::llround(bs * 1e9 / rate)) : 0;
}

}  // namespace

Target::Target(const PathSpec& spec, uint32_t bs)
    : service_ns_{spec.service_ns, spec.write_service_ns >= 0
                                       ? spec.write_service_ns
                                       : spec.service_ns},
      ser_ns_{SerializationNs(LinkRate(spec, /*read=*/false), bs),
              SerializationNs(LinkRate(spec, /*read=*/true), bs)},
      ring_(static_cast<size_t>(std::max(spec.parallelism, 0)), 0) {}

}  // namespace pathwise::lab

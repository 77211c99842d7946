// SPDX-License-Identifier: Apache-2.0
#include "lab/random.h"

namespace pathwise::lab {

ExpInverse::ExpInverse() {
  for (int i = 0; i <= kN; ++i) {
    v_[i] = i < kN ? -std::log1p(-static_cast<double>(i) / kN) : 0;
  }
}

const ExpInverse& UnitExponential() {
  static const ExpInverse table;
  return table;
}

}  // namespace pathwise::lab

// SPDX-License-Identifier: Apache-2.0
// Fuzzes every parser of a single sysfs attribute's content: the kernel
// strings (states, iopolicy), the block stat file, integers, dev_t pairs and
// path disk names. The first byte picks the parser, the rest is the content.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "collectors/block_stat.h"
#include "collectors/kernel_strings.h"
#include "collectors/sysfs_reader.h"
#include "collectors/topology_builder.h"
#include "model/topology.h"

namespace pc = pathwise::collectors;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t which = data[0];
  const absl::string_view text(reinterpret_cast<const char*>(data + 1),
                               size - 1);
  switch (which % 8) {
    case 0: {
      (void)pc::ParseAnaState(text);
      pathwise::model::Path p;
      pc::SetAnaState(text, p);
      break;
    }
    case 1: {
      (void)pc::ParseControllerState(text);
      pathwise::model::Controller c;
      pc::SetControllerState(text, c);
      break;
    }
    case 2: {
      (void)pc::ParseIopolicy(text);
      pathwise::model::Subsystem s;
      pc::SetIopolicy(text, s);
      break;
    }
    case 3:
    case 4:
      (void)pc::ParseBlockStat(text);
      break;
    case 5:
      (void)pc::ParseInt(text);
      break;
    case 6:
      (void)pc::ParseDevId(text);
      break;
    case 7: {
      absl::StatusOr<std::string> head = pc::HeadNameOfPath(text);
      // The head of a path name is shorter than the name (the c<C> goes).
      if (head.ok() && head->size() >= text.size()) __builtin_trap();
      break;
    }
  }
  return 0;
}

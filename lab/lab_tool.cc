// SPDX-License-Identifier: Apache-2.0
// pathwise_lab_tool: `pathwise lab` without the agent. Its command line is
// lab's flags (AddLabFlags) on an App of its own, so it takes exactly what
// `pathwise lab` takes.
#include <iostream>
#include <string>
#include <vector>

#include "lab/lab_cli.h"

int main(int argc, char** argv) {
  return pathwise::lab::RunLabCommandLine(
      std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr);
}

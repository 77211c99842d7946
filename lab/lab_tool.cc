// pathwise_lab_tool: `pathwise lab` without the agent (same flags).
#include <iostream>
#include <string>
#include <vector>

#include "lab/lab_cli.h"

int main(int argc, char** argv) {
  return pathwise::lab::RunLab(std::vector<std::string>(argv + 1, argv + argc),
                               std::cout, std::cerr);
}

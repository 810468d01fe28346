// bp-codegen: ops.yaml (and a backend YAML) -> generated C++, and the Python package's
// bindings and stubs. See docs/generated-code.md.
#include <iostream>
#include <string>
#include <vector>

#include "cli.h"

int main(int argc, char** argv) {
  return bp::codegen::run_cli(std::vector<std::string>(argv + 1, argv + argc), std::cout,
                              std::cerr);
}

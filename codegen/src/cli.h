// The bp-codegen command line, as a function so that tests run it in-process:
//   bp-codegen core    --ops F --derivatives F --public-out D --internal-out D
//   bp-codegen backend --ops F --backend F --out D
//   bp-codegen python  --ops F --output-dir D
//   bp-codegen check   --ops F [--derivatives F] [--backend F]
//   bp-codegen ops-support --ops F --backend F [--backend F ...] --output F
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace bp::codegen {

// Exit statuses: 0 success, 1 bad input (a `file:line:col: error: ...` on `err`), 2 bad usage
// (the usage text on `err`).
inline constexpr int kExitBadInput = 1;
inline constexpr int kExitUsage = 2;

// `args` excludes the program name.
int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace bp::codegen

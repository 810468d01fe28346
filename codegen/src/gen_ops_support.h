// docs/ops-support.md (see docs/generated-code.md, "Op support page"): for each kernel op of
// ops.yaml, the dtypes it takes and which of the given backends implement it, then the
// composites, which run on every backend through the ops they are written over.
#pragma once

#include <string>
#include <vector>

#include "model.h"

namespace bp::codegen {

// One column per backend, in the order given; each config was read against `functions`. A
// CodegenError when `backends` is empty or two of them have the same backend name.
std::string generate_ops_support_md(const NativeFunctions& functions,
                                    const std::vector<BackendConfig>& backends);

}  // namespace bp::codegen

// The conformance kit's generated code (see docs/generated-code.md, "Conformance outputs"):
// KernelOpTable.cpp, one entry per kernel op of ops.yaml with its parameters, its outputs, the
// dtypes it takes, and functions that call its out= form, its functional form and its in-place
// form from boxed arguments, so that bp-conformance can run any kernel op from sample inputs.
#pragma once

#include <string>

#include "model.h"

namespace bp::codegen {

std::string generate_kernel_op_table(const NativeFunctions& functions);

}  // namespace bp::codegen

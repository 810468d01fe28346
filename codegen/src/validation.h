// The rules that make a set of ops.yaml entries consistent, checked once after loading so that
// generators can rely on them. Also fills in defaults (each structured op's meta name).
#pragma once

#include "model.h"

namespace bp::codegen {

// Throws CodegenError at the first broken rule.
void validate_native_functions(NativeFunctions& functions);

}  // namespace bp::codegen

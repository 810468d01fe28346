// The autograd glue generated from derivatives.yaml (see docs/generated-code.md, "Autograd"):
// core_generated/Autograd.h and Autograd.cpp, with a backward node and a recording function per
// entry with formulas, and the first statement of each public function that decides whether
// the call is recorded, refused, or simply run.
#pragma once

#include <string>

#include "code_template.h"
#include "derivatives.h"
#include "model.h"

namespace bp::codegen {

std::string generate_autograd_h(const Derivatives& derivatives);
std::string generate_autograd_cpp(const Derivatives& derivatives);

// What the public function of `f` does about autograd before it runs the op: call the
// recording function when an input needs a gradient (an overload with formulas), refuse such
// inputs (in-place and out= overloads, and functional ones without a derivatives entry), or
// nothing (an entry whose outputs have no gradient).
TemplateLines autograd_prologue(const NativeFunction& f, const Derivatives& derivatives);

}  // namespace bp::codegen

// The typed model of derivatives.yaml: for a functional overload of ops.yaml, one C++
// expression per differentiable input that turns the outputs' gradients into that input's
// gradient, and which outputs have a gradient at all. Reading and checking it lives in
// derivatives_loader.cpp; the generated backward nodes in gen_autograd.cpp.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "diagnostics.h"
#include "model.h"

namespace bp::codegen {

// `self: grad * other`, or `input, weight, bias: native_layer_norm_backward(...)`: one
// expression that gives the gradients of the named inputs (a std::tuple when it names several).
struct DerivativeFormula {
  std::vector<const Argument*> inputs;  // in the order the key names them
  std::string expression;               // whitespace runs (line breaks too) made one space
  std::vector<std::string> names_read;  // the identifiers it reads, each once, in order
  SourceLocation location;              // the key
};

// One entry of derivatives.yaml.
struct DerivativeEntry {
  const NativeFunction* function = nullptr;
  std::vector<DerivativeFormula> formulas;  // in the entry's order
  // One flag per return: whether that output carries a gradient (all true when not written).
  std::vector<bool> output_differentiability;
  SourceLocation location;  // the `name:` value

  bool records() const { return !formulas.empty(); }
};

struct Derivatives {
  std::string path;
  std::vector<DerivativeEntry> entries;  // in derivatives.yaml order

  const DerivativeEntry* find(const NativeFunction& function) const;
};

// The identifiers an expression reads: string and character literals are skipped, and so are
// names right after `.`, `->` or `::` (members and qualified names), and numbers.
std::vector<std::string> formula_identifiers(std::string_view expression);

// The names a formula reads an output by: `result` for a single output, else `result0`,
// `result1`, ...; and the schema's return names. -1 when `name` names no output.
int output_index(const FunctionSchema& schema, std::string_view name);

// Whether a tensor argument takes part in autograd: Tensor, Tensor? or Tensor[], not written.
bool is_differentiable_argument(const Argument& argument);

}  // namespace bp::codegen

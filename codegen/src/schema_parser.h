// Parsing PyTorch-style schema strings into the typed model:
//   max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max,
//               Tensor(b!) max_values) -> (Tensor(a!) values, Tensor(b!) indices)
// Whitespace between tokens is free; FunctionSchema::str() prints the canonical form back.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "model.h"

namespace bp::codegen {

// A schema that does not parse. column() is 1-based within the schema string, so that the
// YAML loader can turn it into a file position.
class SchemaSyntaxError : public std::runtime_error {
 public:
  SchemaSyntaxError(int column, const std::string& message);
  int column() const { return column_; }
  const std::string& message() const { return message_; }

 private:
  int column_;
  std::string message_;
};

FunctionSchema parse_schema(std::string_view text);

// The types Backplane has a C++ and ABI mapping for (see docs/generated-code.md).
bool is_supported_type(const Type& type);

}  // namespace bp::codegen

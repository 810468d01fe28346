#include "diagnostics.h"

#include <fmt/format.h>

namespace bp::codegen {

std::string SourceLocation::str() const {
  if (line <= 0) return file;
  if (column <= 0) return fmt::format("{}:{}", file, line);
  return fmt::format("{}:{}:{}", file, line, column);
}

CodegenError::CodegenError(SourceLocation location, const std::string& message)
    : std::runtime_error(fmt::format("{}: error: {}", location.str(), message)),
      location_(std::move(location)),
      message_(message) {}

}  // namespace bp::codegen

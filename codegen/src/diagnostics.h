// Where a piece of input came from, and the one error type bp-codegen reports. Every error is
// printed as `file:line:col: error: message`, the form compilers use, so that editors and CI
// logs link straight to the offending line.
#pragma once

#include <stdexcept>
#include <string>

namespace bp::codegen {

// 1-based line and column; 0 means unknown (the message then names only the file).
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;

  // The same line, `offset` characters further right: a position inside a one-line value.
  SourceLocation shifted(int offset) const { return {file, line, column + offset}; }
  std::string str() const;  // "ops.yaml:12:8", "ops.yaml" when the position is unknown
};

class CodegenError : public std::runtime_error {
 public:
  CodegenError(SourceLocation location, const std::string& message);
  const SourceLocation& location() const { return location_; }
  const std::string& message() const { return message_; }

 private:
  SourceLocation location_;
  std::string message_;
};

}  // namespace bp::codegen

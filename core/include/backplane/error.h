// bp::Error: every failure the core reports. Messages say what was wrong and what to do.
#pragma once

#include <stdexcept>
#include <string>

namespace bp {

enum class ErrorCode {
  InvalidArgument,  // the caller broke a rule of the op or API
  OutOfMemory,      // a device could not provide memory; the process stays usable
  NotImplemented,   // no backend provides this op for this device
  Backend,          // a plugin or its device reported a failure
  Internal,         // a bug in Backplane
};

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  explicit Error(const std::string& message) : Error(ErrorCode::InvalidArgument, message) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

}  // namespace bp

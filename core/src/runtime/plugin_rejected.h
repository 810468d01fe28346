// Why a plugin file was not loaded. The loader throws it from any step; the registry keeps it
// as a PluginFailure {path, reason}, so the reason says what is wrong and what to do but not
// which file (the failure names that).
#pragma once

#include <stdexcept>

namespace bp::detail {

class PluginRejected : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace bp::detail

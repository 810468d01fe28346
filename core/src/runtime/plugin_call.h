// Calls into a plugin's own code. Plugin functions are C functions that report failure by
// status; one written in C++ may still let an exception escape (the SDK's bp::plugin::guard
// exists to stop that, but a hand-written function can forget it). Such an exception is caught
// here, so that a misbehaving plugin is refused with its message instead of leaving loading
// half done, or terminating the process from a noexcept path.
#pragma once

#include "runtime/plugin_rejected.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace bp::detail {

// The exception being handled, for messages: its what(), or that it has an unknown type.
// Call only inside a catch block.
std::string describe_current_exception();

// The reason a plugin is refused when `exception` escaped its function `function`.
std::string escaped_exception_reason(std::string_view function, std::string_view exception);

// Returns call(), a call into the plugin's function `function`. Throws PluginRejected, naming
// the function and the exception, when one escapes it.
template <typename Call>
decltype(auto) call_plugin(std::string_view function, Call&& call) {
  try {
    return std::forward<Call>(call)();
  } catch (...) {
    throw PluginRejected(escaped_exception_reason(function, describe_current_exception()));
  }
}

// For calls on paths that cannot throw (shutting down, freeing): runs call() and returns the
// escaped exception's description, or nullopt when none escaped.
template <typename Call>
std::optional<std::string> call_plugin_noexcept(Call&& call) noexcept {
  try {
    std::forward<Call>(call)();
    return std::nullopt;
  } catch (...) {
    return describe_current_exception();
  }
}

}  // namespace bp::detail

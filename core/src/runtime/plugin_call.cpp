#include "runtime/plugin_call.h"

#include <fmt/format.h>

#include <exception>

namespace bp::detail {

std::string describe_current_exception() {
  try {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception of unknown type";
  }
}

std::string escaped_exception_reason(std::string_view function, std::string_view exception) {
  return fmt::format(
      "its {} let a C++ exception escape ({}): plugin functions must return a bp_status "
      "instead (bp::plugin::guard turns exceptions into one)",
      function, exception);
}

}  // namespace bp::detail

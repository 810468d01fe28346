// BACKPLANE_CPU_CONV_LAYOUT (conv_layout.h).
#include "kernels/conv_layout.h"

#include <backplane/sdk/log.hpp>

#include <cstdlib>
#include <string>
#include <string_view>

namespace bp::cpu {

ConvLayoutChoice conv_layout_from(const char* value) {
  if (value == nullptr) return ConvLayoutChoice::Measured;
  const std::string_view text(value);
  if (text == "measured") return ConvLayoutChoice::Measured;
  if (text == "plain") return ConvLayoutChoice::Plain;
  if (text == "blocked") return ConvLayoutChoice::Blocked;
  plugin::warn("BACKPLANE_CPU_CONV_LAYOUT='" + std::string(text) +
               "' is none of measured (time both layouts on each problem's first call, the "
               "default), plain (NCHW) and blocked (oneDNN's choice); using measured");
  return ConvLayoutChoice::Measured;
}

ConvLayoutChoice conv_layout_choice() {
  static const ConvLayoutChoice choice =
      conv_layout_from(secure_getenv("BACKPLANE_CPU_CONV_LAYOUT"));
  return choice;
}

}  // namespace bp::cpu

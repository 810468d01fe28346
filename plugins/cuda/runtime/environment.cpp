#include "runtime/environment.h"

#include <backplane/sdk/log.hpp>

#include <cstdlib>
#include <cstring>
#include <string>

namespace bp::cuda {

bool switch_value(const char* name, const char* value, bool fallback) {
  if (value == nullptr) return fallback;
  if (std::strcmp(value, "0") == 0) return false;
  if (std::strcmp(value, "1") == 0) return true;
  plugin::warn(std::string(name) + "='" + value + "' is neither 0 nor 1; using the default, " +
               (fallback ? "1" : "0"));
  return fallback;
}

bool tf32_allowed() {
  static const bool allowed =
      switch_value("BACKPLANE_CUDA_ALLOW_TF32", secure_getenv("BACKPLANE_CUDA_ALLOW_TF32"), false);
  return allowed;
}

bool cudnn_allowed() {
  static const bool allowed =
      switch_value("BACKPLANE_CUDA_CUDNN", secure_getenv("BACKPLANE_CUDA_CUDNN"), true);
  return allowed;
}

ConvLayout conv_layout_value(const char* value) {
  if (value == nullptr || std::strcmp(value, "auto") == 0) return ConvLayout::Measured;
  if (std::strcmp(value, "nchw") == 0) return ConvLayout::Nchw;
  if (std::strcmp(value, "nhwc") == 0) return ConvLayout::Nhwc;
  plugin::warn(std::string("BACKPLANE_CUDA_CONV_LAYOUT='") + value +
               "' is none of auto, nchw and nhwc; using the default, auto");
  return ConvLayout::Measured;
}

ConvLayout conv_layout() {
  static const ConvLayout layout = conv_layout_value(secure_getenv("BACKPLANE_CUDA_CONV_LAYOUT"));
  return layout;
}

}  // namespace bp::cuda

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

}  // namespace bp::cuda

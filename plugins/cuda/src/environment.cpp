#include "environment.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace bp::cuda {

bool allow_tf32_from(const char* value) {
  if (value == nullptr || std::strcmp(value, "0") == 0) return false;
  if (std::strcmp(value, "1") == 0) return true;
  std::fprintf(stderr,
               "[backplane] warn: BACKPLANE_CUDA_ALLOW_TF32='%s' is neither 0 nor 1; float32 matrix products "
               "stay exact (0)\n",
               value);
  return false;
}

bool tf32_allowed() {
  static const bool allowed = allow_tf32_from(secure_getenv("BACKPLANE_CUDA_ALLOW_TF32"));
  return allowed;
}

}  // namespace bp::cuda

#include "kernels/dtype_support.h"

#include <string>

namespace bp::opencl {

void require_supported(const Device& device, std::string_view op, DType dtype, DTypes supported) {
  const bool has_kernel = supported == DTypes::Any ||
                          (supported == DTypes::NonBool && dtype != DType::Bool) ||
                          (supported == DTypes::Floating && is_floating_point(dtype));
  if (!has_kernel) {
    throw plugin::Error(BP_STATUS_UNIMPLEMENTED, std::string(op) + ": not implemented for '" +
                                                     std::string(dtype_name(dtype)) + "'");
  }
  if (dtype == DType::Float64 && !device.has_fp64()) {
    throw plugin::Error(BP_STATUS_UNIMPLEMENTED,
                        std::string(op) + ": " + device.label() +
                            " has no double precision (cl_khr_fp64), so it cannot compute on "
                            "Double tensors; convert them to Float first");
  }
}

}  // namespace bp::opencl

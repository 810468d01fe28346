#include "runtime/runtime.h"

#include <backplane/sdk/log.hpp>

#include <cstdlib>
#include <optional>
#include <vector>

namespace bp::opencl {
namespace {

// BACKPLANE_OPENCL_KERNEL_SHAPE: the kernel shape of every device; unset, each device's type
// decides. Read with secure_getenv, as every Backplane variable is (docs/environment.md).
std::optional<KernelShape> kernel_shape_from_environment() {
  const char* value = secure_getenv("BACKPLANE_OPENCL_KERNEL_SHAPE");
  if (value == nullptr || *value == '\0') return std::nullopt;
  const std::optional<KernelShape> shape = kernel_shape_named(value);
  if (!shape) {
    plugin::warn(std::string("BACKPLANE_OPENCL_KERNEL_SHAPE='") + value +
                 "' is neither 'gpu' nor 'cpu'; ignoring it, so each device runs the kernels "
                 "shaped for its type");
  }
  return shape;
}

}  // namespace

Runtime& Runtime::get() {
  // Never destroyed: OpenCL objects are released by shut_down(), not by exit-time destructors
  // that may run after the driver has gone.
  static Runtime* const runtime = new Runtime();
  return *runtime;
}

Runtime::Runtime() : cache_(ProgramCache::default_folder()) {
  cl_uint platform_count = 0;
  const cl_int status = clGetPlatformIDs(0, nullptr, &platform_count);
  if (status != CL_SUCCESS || platform_count == 0) {
    devices_.set_none(
        "no OpenCL platform found (clGetPlatformIDs: " +
        (status == CL_SUCCESS ? std::string("0 platforms") : cl_error_text(status)) +
        "); install an OpenCL driver (ICD), e.g. pocl-opencl-icd, and check OCL_ICD_VENDORS");
    return;
  }
  std::vector<cl_platform_id> platforms(platform_count);
  check_cl(clGetPlatformIDs(platform_count, platforms.data(), nullptr), "clGetPlatformIDs");

  const std::optional<KernelShape> shape = kernel_shape_from_environment();
  std::string skipped;  // devices that would not open, for the reason below
  for (cl_platform_id platform : platforms) {
    cl_uint count = 0;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) != CL_SUCCESS) continue;
    std::vector<cl_device_id> ids(count);
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, ids.data(), nullptr) != CL_SUCCESS) {
      continue;
    }
    for (cl_device_id id : ids) {
      try {
        devices_.add(std::make_unique<Device>(devices_.count(), platform, id, &cache_, shape));
      } catch (const plugin::Error& e) {
        skipped += std::string("; a device could not be opened: ") + e.what();
      }
    }
  }
  if (devices_.count() == 0) {
    devices_.set_none(std::to_string(platform_count) + " OpenCL platform(s) but no usable device" +
                      skipped);
  }
}

void Runtime::shut_down() {
  devices_.shut_down([](auto& devices) { devices.clear(); });
}

}  // namespace bp::opencl

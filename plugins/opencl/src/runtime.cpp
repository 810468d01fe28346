#include "runtime.h"

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <vector>

namespace bp::opencl {
namespace {

// BACKPLANE_OPENCL_MATMUL: the matmul kernel of every device; unset, each device's type decides.
std::optional<MatmulKernel> matmul_kernel_from_environment() {
  const char* value = std::getenv("BACKPLANE_OPENCL_MATMUL");
  if (value == nullptr || *value == '\0') return std::nullopt;
  const std::optional<MatmulKernel> kernel = matmul_kernel_named(value);
  if (!kernel) {
    std::fprintf(stderr,
                 "backplane: opencl: BACKPLANE_OPENCL_MATMUL='%s' is neither 'tiled' nor 'rows'; "
                 "ignoring it, so each device uses the kernel for its type (rows on CPUs)\n",
                 value);
  }
  return kernel;
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

  const std::optional<MatmulKernel> matmul = matmul_kernel_from_environment();
  std::string skipped;  // devices that would not open, for the reason below
  for (cl_platform_id platform : platforms) {
    cl_uint count = 0;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) != CL_SUCCESS) continue;
    std::vector<cl_device_id> ids(count);
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, ids.data(), nullptr) != CL_SUCCESS) continue;
    for (cl_device_id id : ids) {
      try {
        devices_.add(std::make_unique<Device>(devices_.count(), platform, id, &cache_, matmul));
      } catch (const plugin::Error& e) {
        skipped += std::string("; a device could not be opened: ") + e.what();
      }
    }
  }
  if (devices_.count() == 0) {
    devices_.set_none(std::to_string(platform_count) + " OpenCL platform(s) but no usable device" + skipped);
  }
}

void Runtime::shut_down() {
  devices_.shut_down([](auto& devices) { devices.clear(); });
}

}  // namespace bp::opencl

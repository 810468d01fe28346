#include "runtime.h"

#include <vector>

namespace bp::opencl {

Runtime& Runtime::get() {
  // Never destroyed: OpenCL objects are released by shutdown(), not by exit-time destructors
  // that may run after the driver has gone.
  static Runtime* const runtime = new Runtime();
  return *runtime;
}

Runtime::Runtime() : cache_(ProgramCache::default_folder()) {
  cl_uint platform_count = 0;
  const cl_int status = clGetPlatformIDs(0, nullptr, &platform_count);
  if (status != CL_SUCCESS || platform_count == 0) {
    no_devices_reason_ =
        "no OpenCL platform found (clGetPlatformIDs: " +
        (status == CL_SUCCESS ? std::string("0 platforms") : cl_error_text(status)) +
        "); install an OpenCL driver (ICD), e.g. pocl-opencl-icd, and check OCL_ICD_VENDORS";
    return;
  }
  std::vector<cl_platform_id> platforms(platform_count);
  check_cl(clGetPlatformIDs(platform_count, platforms.data(), nullptr), "clGetPlatformIDs");

  std::string skipped;  // devices that would not open, for the reason below
  for (cl_platform_id platform : platforms) {
    cl_uint count = 0;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) != CL_SUCCESS) continue;
    std::vector<cl_device_id> ids(count);
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, ids.data(), nullptr) != CL_SUCCESS) continue;
    for (cl_device_id id : ids) {
      try {
        devices_.push_back(
            std::make_unique<Device>(static_cast<int>(devices_.size()), platform, id, &cache_));
      } catch (const plugin::Error& e) {
        skipped += std::string("; a device could not be opened: ") + e.what();
      }
    }
  }
  if (devices_.empty()) {
    no_devices_reason_ = std::to_string(platform_count) + " OpenCL platform(s) but no usable device" + skipped;
  }
}

Device& Runtime::device(int index) {
  if (shut_down_.load(std::memory_order_acquire)) {
    throw plugin::Error(BP_STATUS_DEVICE_ERROR, "the opencl plugin has shut down");
  }
  if (index < 0 || index >= device_count()) {
    throw plugin::Error(BP_STATUS_INVALID_ARGUMENT,
                        "opencl has " + std::to_string(device_count()) + " device(s); opencl:" +
                            std::to_string(index) + " does not exist");
  }
  return *devices_[static_cast<size_t>(index)];
}

void Runtime::shutdown() {
  if (shut_down_.exchange(true, std::memory_order_acq_rel)) return;
  devices_.clear();
}

}  // namespace bp::opencl

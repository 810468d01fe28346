// The OpenCL API as this plugin uses it: the 1.2 headers of the ICD loader, and turning a
// failed call into a bp::plugin::Error that names the call and the error code.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <backplane/sdk/status.hpp>

#include <string>
#include <string_view>
#include <utility>

namespace bp::opencl {

// "CL_OUT_OF_RESOURCES (-5)".
std::string cl_error_text(cl_int code);

// Throws an Error naming `what` and the code unless `code` is CL_SUCCESS. Allocation failures
// become BP_STATUS_OUT_OF_MEMORY, everything else BP_STATUS_DEVICE_ERROR.
void check_cl(cl_int code, std::string_view what);

// Owns one reference to an OpenCL object (a context, queue, program, buffer...).
template <typename Handle, cl_int (*Release)(Handle)>
class Owned {
 public:
  Owned() = default;
  explicit Owned(Handle handle) : handle_(handle) {}
  ~Owned() { reset(); }
  Owned(Owned&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Owned& operator=(Owned&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  Handle get() const { return handle_; }
  void reset() {
    if (handle_ != nullptr) Release(std::exchange(handle_, nullptr));
  }

 private:
  Handle handle_ = nullptr;
};

using OwnedContext = Owned<cl_context, clReleaseContext>;
using OwnedQueue = Owned<cl_command_queue, clReleaseCommandQueue>;
using OwnedProgram = Owned<cl_program, clReleaseProgram>;
using OwnedKernel = Owned<cl_kernel, clReleaseKernel>;
using OwnedBuffer = Owned<cl_mem, clReleaseMemObject>;
using OwnedEvent = Owned<cl_event, clReleaseEvent>;

}  // namespace bp::opencl

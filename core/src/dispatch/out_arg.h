// What the meta step computes for each output, and how a given `out=` or in-place tensor is
// checked against it.
#pragma once

#include <backplane/device.h>
#include <backplane/dim_vector.h>
#include <backplane/factories.h>
#include <backplane/sdk/dtype.hpp>
#include <backplane/tensor.h>

#include <optional>

namespace bp {

struct OutputSpec {
  DimVector sizes;
  DType dtype = kFloat32;
  // nullopt when no tensor argument decides the device (arange): an out= tensor may be on any
  // device, and a fresh output goes to default_device().
  std::optional<Device> device;
};

namespace detail {

// A fresh, contiguous output (through the device's caching allocator).
inline Tensor allocate_output(const OutputSpec& spec) {
  return empty(spec.sizes, spec.dtype, spec.device ? *spec.device : default_device());
}

// An `out=` or in-place tensor checked against its spec.
//  - Out: a tensor of another shape is an error unless it has no elements, in which case it
//    is resized (given new storage) as PyTorch does.
//  - InPlace: the shape must match exactly.
//  - In both, a different device is an error; a different dtype is an error unless the
//    computed dtype can be cast to it (PyTorch's can_cast), in which case the kernel writes a
//    temporary and finish() copies it over.
//  - A non-contiguous tensor also gets a temporary, so kernels always write contiguous outputs
//    of the dtype their meta step computed.
class OutArg {
 public:
  enum class Kind { Out, InPlace };
  OutArg(Tensor& given, const OutputSpec& spec, Kind kind, const char* op, const char* arg);
  // The tensor to hand to the kernel.
  const Tensor& target() const { return temporary_.defined() ? temporary_ : given_; }
  void finish();

 private:
  Tensor& given_;
  Tensor temporary_;
};

}  // namespace detail
}  // namespace bp

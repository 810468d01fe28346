// How the ops reach tensors on a GPU: their device and address, the launch shapes the kernels
// take (see kernels/geometry.h), scratch memory, and the dtype promises of the meta step.
#pragma once

#include "kernels/launch.h"
#include "runtime/device.h"
#include "runtime/device_guard.h"

#include <backplane/sdk/dtype_promises.hpp>
#include <backplane/sdk/reduction_dims.hpp>
#include <backplane/sdk/strided_loop.hpp>
#include <backplane/sdk/tensor_view.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

namespace bp::cuda {

using plugin::DimValues;
using plugin::TensorView;

// The device a tensor lives on.
Device& device_of(const TensorView& view);

// A tensor's device, made the calling thread's current CUDA device while this lives: kernels
// launch on the current device, whatever device the caller's thread had current. Every op makes
// one before launching anything.
class OnDevice {
 public:
  explicit OnDevice(const TensorView& view) : device_(device_of(view)), guard_(device_.index()) {}
  Device& device() const { return device_; }
  LaunchTarget launch_target() const { return device_.launch_target(); }

 private:
  Device& device_;
  DeviceGuard guard_;
};
// The address of a tensor's first element.
char* address_of(const TensorView& view);

// One operand of an elementwise walk: its first element and its strides over the walked shape.
struct Operand {
  char* data = nullptr;
  std::span<const int64_t> strides;
  size_t element_size = 0;
};
Operand operand_of(const TensorView& view);
// The same tensor read as if expanded to `sizes`; `strides` keeps the strides alive.
Operand broadcast_operand(std::string_view op, const TensorView& view,
                          std::span<const int64_t> sizes, DimValues<int64_t>& strides);

// Calls launch(ElementwiseLaunch<N>) to walk `sizes` with `operands`: once, or, when more than
// kMaxKernelDims dimensions remain after collapsing, once per index of the outer ones.
template <int N>
void for_each_launch(Device& device, std::span<const int64_t> sizes,
                     const std::array<Operand, N>& operands,
                     const std::function<void(const ElementwiseLaunch<N>&)>& launch);

// The group shape of `sizes` split into kept and reduced dimensions (`reduced[d]`), for operands
// whose strides span all of `sizes` (0 where an operand does not vary). More than
// kMaxKernelDims kept or reduced dimensions that do not merge are refused with a message.
template <int N>
GroupShape<N> group_shape(std::string_view op, std::span<const int64_t> sizes,
                          const DimValues<bool>& reduced,
                          const std::array<std::span<const int64_t>, N>& strides);

// Scratch memory of one launch from the device's allocator, given back when this goes out of
// scope (see GroupScratch).
class DeviceScratch final : public GroupScratch {
 public:
  explicit DeviceScratch(Device& device) : device_(device) {}
  ~DeviceScratch() override;
  DeviceScratch(const DeviceScratch&) = delete;
  DeviceScratch& operator=(const DeviceScratch&) = delete;

  void* allocate(size_t bytes) override;
  uint32_t* zeroed_counters(int64_t count) override;

 private:
  Device& device_;
  std::vector<void*> blocks_;
};

// An output that kernels write as a dense (row-major) array: the tensor itself where it is
// contiguous, else a buffer from `scratch` that copy_back copies into it once they are queued.
class DenseOutput {
 public:
  DenseOutput(Device& device, const TensorView& view, DeviceScratch& scratch);
  void* data() const { return data_; }
  // Queues the copy into the tensor, where data() is a buffer.
  void copy_back() const;

 private:
  Device& device_;
  const TensorView& view_;
  void* data_;
};

// The dtypes the core's meta step promises, checked as every backend checks them.
using plugin::require_dtype;
using plugin::require_widening_dtype;

// Dimension arguments follow the SDK's rules and messages, shared with the other backends.
using plugin::reduced_dims;
using plugin::reduced_output_strides;
using plugin::single_reduced_dim;
using plugin::single_reduced_dim_or_all;
using plugin::trailing_dims;
using plugin::wrap_dim;

}  // namespace bp::cuda

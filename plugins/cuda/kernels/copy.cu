// Launches of copies, conversions, fills and arange (kernels in copy.cuh).
#include "kernels/copy.cuh"
#include "kernels/elementwise_launch.cuh"

namespace bp::cuda {
namespace {

// The float conversions of mixed precision, as dense kernels with vector loads.
bool convert_common_floats(DType to, DType from, const ElementwiseLaunch<2>& launch) {
  if (!launch.dense) return false;
  if (from == DType::Float32 && to == DType::Float16) {
    launch_elementwise<__half, float>(launch, Identity{});
  } else if (from == DType::Float32 && to == DType::BFloat16) {
    launch_elementwise<__nv_bfloat16, float>(launch, Identity{});
  } else if (from == DType::Float16 && to == DType::Float32) {
    launch_elementwise<float, __half>(launch, Identity{});
  } else if (from == DType::BFloat16 && to == DType::Float32) {
    launch_elementwise<float, __nv_bfloat16>(launch, Identity{});
  } else {
    return false;
  }
  return true;
}

}  // namespace

void launch_copy_bits(size_t element_size, const ElementwiseLaunch<2>& launch) {
  visit_bits_type(element_size, [&](auto tag) {
    using Bits = typename decltype(tag)::type;
    launch_elementwise<Bits, Bits>(launch, Identity{});
  });
}

void launch_convert(DType to, DType from, const ElementwiseLaunch<2>& launch) {
  if (launch.numel == 0 || convert_common_floats(to, from, launch)) return;
  const LaunchTarget& target = launch.target;
  const unsigned int blocks = grid_blocks(launch.numel, kElementwiseThreads, target);
  convert_any<<<blocks, kElementwiseThreads, 0, target.stream>>>(
      shape_of(launch), launch.numel, launch.data[0], to, launch.data[1], from);
  check_launch("convert_any");
}

void launch_fill_bits(size_t element_size, uint64_t bits, const ElementwiseLaunch<1>& launch) {
  visit_bits_type(element_size, [&](auto tag) {
    using Bits = typename decltype(tag)::type;
    launch_elementwise<Bits>(launch, Constant<Bits>{static_cast<Bits>(bits)});
  });
}

void launch_arange(DType dtype, void* out, int64_t count, int64_t stride, const Scalar& start,
                   const Scalar& step, const LaunchTarget& target) {
  if (count == 0) return;
  plugin::visit_dtype<kernel_dtypes::arange_start_out>(dtype, [&](auto tag) {
    using T = device_t<typename decltype(tag)::type>;
    using Value = std::conditional_t<kIsFloating<T>, double, int64_t>;
    const unsigned int blocks = grid_blocks(count, kElementwiseThreads, target);
    arange_kernel<<<blocks, kElementwiseThreads, 0, target.stream>>>(
        static_cast<T*>(out), count, stride, start.to<Value>(), step.to<Value>());
    check_launch("arange");
  });
}

}  // namespace bp::cuda

// Comparisons (Bool results, NaN compares false) and where, which moves elements unchanged and
// so needs one kernel per element width rather than per dtype.
#include "kernels/elementwise_launch.cuh"

namespace bp::cuda {
namespace {

struct Equal {
  template <typename C>
  __device__ bool operator()(C x, C y) const {
    return x == y;
  }
};

struct Less {
  template <typename C>
  __device__ bool operator()(C x, C y) const {
    return x < y;
  }
};

struct Greater {
  template <typename C>
  __device__ bool operator()(C x, C y) const {
    return x > y;
  }
};

struct Select {
  template <typename Bits>
  __device__ Bits operator()(bool pick_self, Bits self, Bits other) const {
    return pick_self ? self : other;
  }
};

template <typename Kernel, typename Fn>
void compare(DType dtype, const ElementwiseLaunch<3>& launch, Fn fn) {
  plugin::visit_dtype<Kernel>(dtype, [&](auto tag) {
    using T = device_t<typename decltype(tag)::type>;
    launch_elementwise<bool, T, T>(launch, fn);
  });
}

}  // namespace

void launch_compare(CompareOp op, DType dtype, const ElementwiseLaunch<3>& launch) {
  switch (op) {
    case CompareOp::Eq: return compare<kernel_dtypes::eq_Tensor_out>(dtype, launch, Equal{});
    case CompareOp::Lt: return compare<kernel_dtypes::lt_Tensor_out>(dtype, launch, Less{});
    case CompareOp::Gt: return compare<kernel_dtypes::gt_Tensor_out>(dtype, launch, Greater{});
  }
}

void launch_where(size_t element_size, const ElementwiseLaunch<4>& launch) {
  visit_bits_type(element_size, [&](auto tag) {
    using Bits = typename decltype(tag)::type;
    launch_elementwise<Bits, bool, Bits, Bits>(launch, Select{});
  });
}

}  // namespace bp::cuda

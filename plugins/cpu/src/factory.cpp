// arange: out[i] = start + i * step over out's elements in row-major order. The meta step
// sized out; computing each value from i (rather than adding step repeatedly) keeps rounding
// errors from accumulating.
#include "CPUNativeFunctions.h"

#include "dtypes.h"
#include "strided_loop.h"

#include <cstdint>
#include <type_traits>

namespace bp::cpu {

void arange_start_out(const bp::Scalar& start, const bp::Scalar& /*end: out's size encodes it*/,
                      const bp::Scalar& step, const TensorView& out) {
  visit_supported<NonBoolDType>("arange", out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    // double for floating dtypes, int64 for integers, as PyTorch computes.
    using Value = std::conditional_t<std::is_floating_point_v<compute_t<T>>, double, int64_t>;
    const Value first = start.to<Value>();
    const Value increment = step.to<Value>();
    T* data = out.data<T>();
    int64_t index = 0;
    const StridedLoop<1> loop(out.sizes(), {out.strides()});
    loop.for_each_row([&](const Offsets<1>& at, const Offsets<1>& stride, int64_t length) {
      for (int64_t i = 0; i < length; ++i, ++index) {
        data[at[0] + i * stride[0]] = static_cast<T>(first + static_cast<Value>(index) * increment);
      }
    });
  });
}

}  // namespace bp::cpu

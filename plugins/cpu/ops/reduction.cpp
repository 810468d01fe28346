// Reductions: sum, mean, amax, max.dim and argmax, over any dimensions and strides.
#include "CPUNativeFunctions.h"

#include "kernels/max_with_index.h"
#include "kernels/reduction_loops.h"
#include "kernels/strided_loop.h"
#include "kernels/sum.h"

#include <backplane/sdk/reduction_dims.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace bp::cpu {
namespace {

// sum and mean, for the dtypes of out that Kernel takes. The meta step has given self out's
// dtype, or one that widens exactly to it.
template <typename Kernel>
void sum_into(std::string_view op, const TensorView& self, const DimValues<bool>& reduced,
              bool keepdim, const TensorView& out, bool average) {
  require_widening_dtype(op, "self", self, out.dtype());
  const DimValues<int64_t> out_strides = reduced_output_strides(out, reduced, keepdim);
  const ReductionLoops<2> loops(self.sizes(), {self.strides(), out_strides.span()}, reduced);
  plugin::visit_dtype<Kernel>(out.dtype(), [&](auto out_tag) {
    using Out = typename decltype(out_tag)::type;
    plugin::visit(self.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (widens_exactly(plugin::kDTypeOf<T>, plugin::kDTypeOf<Out>)) {
        sum_groups(loops, self.data<const T>(), out.data<Out>(), average);
      }
    });
  });
}

// The largest element of each group, and its position in the group, for the dtypes of self
// that Kernel takes. Either output may be absent. The meta step refuses empty groups already;
// the kernel checks as well, since an empty group has no maximum to write.
template <typename Kernel>
void max_with_index(std::string_view op, const TensorView& self, const DimValues<bool>& reduced,
                    bool keepdim, const TensorView* values, const TensorView* indices) {
  if (values) require_dtype(op, "values", *values, self.dtype());
  if (indices) require_dtype(op, "indices", *indices, kInt64);
  const DimValues<int64_t> value_strides = values
                                               ? reduced_output_strides(*values, reduced, keepdim)
                                               : DimValues<int64_t>(reduced.size());
  const DimValues<int64_t> index_strides = indices
                                               ? reduced_output_strides(*indices, reduced, keepdim)
                                               : DimValues<int64_t>(reduced.size());
  const ReductionLoops<3> loops(
      self.sizes(), {self.strides(), value_strides.span(), index_strides.span()}, reduced);
  check_nonempty_reduction(op, loops.group_size());
  plugin::visit_dtype<Kernel>(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const auto store = [&](int64_t value_at, int64_t index_at, C best, int64_t best_position) {
      if (values) values->data<T>()[value_at] = static_cast<T>(best);
      if (indices) indices->data<int64_t>()[index_at] = best_position;
    };
    max_groups(loops, self.data<const T>(), store);
  });
}

}  // namespace

void sum_IntList_out(const TensorView& self, std::optional<std::span<const int64_t>> dim,
                     bool keepdim, std::optional<bp::DType> /*dtype: out already has it*/,
                     const TensorView& out) {
  sum_into<kernel_dtypes::sum_IntList_out>("sum", self, reduced_dims("sum", self.dim(), dim),
                                           keepdim, out, /*average=*/false);
}

void mean_out(const TensorView& self, std::optional<std::span<const int64_t>> dim, bool keepdim,
              std::optional<bp::DType> /*dtype: out already has it*/, const TensorView& out) {
  sum_into<kernel_dtypes::mean_out>("mean", self, reduced_dims("mean", self.dim(), dim), keepdim,
                                    out, /*average=*/true);
}

void amax_out(const TensorView& self, std::span<const int64_t> dim, bool keepdim,
              const TensorView& out) {
  max_with_index<kernel_dtypes::amax_out>("amax", self, reduced_dims("amax", self.dim(), dim),
                                          keepdim, &out, nullptr);
}

// PyTorch names max.dim's outputs `max` (the values) and `max_values` (the indices).
void max_dim_max(const TensorView& self, int64_t dim, bool keepdim, const TensorView& max,
                 const TensorView& max_values) {
  max_with_index<kernel_dtypes::max_dim_max>(
      "max", self, single_reduced_dim("max", self.dim(), dim), keepdim, &max, &max_values);
}

// Without a dim, the index is into the flattened input.
void argmax_out(const TensorView& self, std::optional<int64_t> dim, bool keepdim,
                const TensorView& out) {
  const DimValues<bool> reduced = single_reduced_dim_or_all("argmax", self.dim(), dim);
  max_with_index<kernel_dtypes::argmax_out>("argmax", self, reduced, keepdim, nullptr, &out);
}

}  // namespace bp::cpu

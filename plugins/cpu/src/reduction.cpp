// Reductions: sum, mean, amax, max.dim and argmax, over any dimensions and strides.
#include "CPUNativeFunctions.h"

#include "dtypes.h"
#include "reduction.h"
#include "strided_loop.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>

namespace bp::cpu {
namespace {

// sum and mean. The meta step has given self out's dtype; elements are accumulated in double
// for floating dtypes and in int64 for the others (then wrapped to out's dtype, as PyTorch does).
void sum_into(std::string_view op, const TensorView& self, const DimValues<bool>& reduced,
              bool keepdim, const TensorView& out, bool average) {
  require_dtype(op, "self", self, out.dtype());
  if (average && !is_floating_point(out.dtype())) unsupported_dtype(op, out.dtype());
  const DimValues<int64_t> out_strides = reduced_output_strides(out, reduced, keepdim);
  const ReductionLoops<2> loops(self.sizes(), {self.strides(), out_strides.span()}, reduced);
  plugin::visit(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = std::conditional_t<std::is_floating_point_v<compute_t<T>>, double, int64_t>;
    const T* input = self.data<const T>();
    T* output = out.data<T>();
    // mean of nothing is 0/0 = NaN, as in PyTorch.
    const double count = static_cast<double>(loops.group_size());
    loops.for_each_group([&](const Offsets<2>& group) {
      Acc total = 0;
      loops.for_each_in_group(group, [&](const Offsets<2>& at, int64_t) {
        total += static_cast<Acc>(static_cast<compute_t<T>>(input[at[0]]));
      });
      if constexpr (std::is_floating_point_v<Acc>) {
        output[group[1]] = static_cast<T>(average ? total / count : total);
      } else {
        output[group[1]] = static_cast<T>(total);
      }
    });
  });
}

// The largest element of each group, and its position in the group (the first one; NaN counts
// as larger than everything, as in PyTorch). Either output may be absent. The meta step
// refuses empty groups already; the kernel checks as well, since an empty group has no maximum
// to write.
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
  plugin::visit(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T* input = self.data<const T>();
    loops.for_each_group([&](const Offsets<3>& group) {
      C best{};
      int64_t best_position = 0;
      loops.for_each_in_group(group, [&](const Offsets<3>& at, int64_t position) {
        const C value = static_cast<C>(input[at[0]]);
        const bool better = is_nan(value) ? !is_nan(best) : value > best;
        if (position == 0 || better) {
          best = value;
          best_position = position;
        }
      });
      if (values) values->data<T>()[group[1]] = static_cast<T>(best);
      if (indices) indices->data<int64_t>()[group[2]] = best_position;
    });
  });
}

}  // namespace

void sum_IntList_out(const TensorView& self, std::optional<std::span<const int64_t>> dim,
                     bool keepdim, std::optional<bp::DType> /*dtype: out already has it*/,
                     const TensorView& out) {
  sum_into("sum", self, reduced_dims("sum", self.dim(), dim.value_or(std::span<const int64_t>())),
           keepdim, out, /*average=*/false);
}

void mean_out(const TensorView& self, std::optional<std::span<const int64_t>> dim, bool keepdim,
              std::optional<bp::DType> /*dtype: out already has it*/, const TensorView& out) {
  sum_into("mean", self, reduced_dims("mean", self.dim(), dim.value_or(std::span<const int64_t>())),
           keepdim, out, /*average=*/true);
}

void amax_out(const TensorView& self, std::span<const int64_t> dim, bool keepdim,
              const TensorView& out) {
  max_with_index("amax", self, reduced_dims("amax", self.dim(), dim), keepdim, &out, nullptr);
}

// PyTorch names max.dim's outputs `max` (the values) and `max_values` (the indices).
void max_dim_max(const TensorView& self, int64_t dim, bool keepdim, const TensorView& max,
                 const TensorView& max_values) {
  max_with_index("max", self, single_reduced_dim("max", self.dim(), dim), keepdim, &max,
                 &max_values);
}

// Without a dim, the index is into the flattened input.
void argmax_out(const TensorView& self, std::optional<int64_t> dim, bool keepdim,
                const TensorView& out) {
  const DimValues<bool> reduced = dim ? single_reduced_dim("argmax", self.dim(), *dim)
                                      : DimValues<bool>(static_cast<size_t>(self.dim()), true);
  max_with_index("argmax", self, reduced, keepdim, nullptr, &out);
}

}  // namespace bp::cpu

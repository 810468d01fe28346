// embedding and index_select: out's slice i along a dim is self's slice index[i]; and their
// gradients, embedding_dense_backward and index_add, which add slices into the ones an index
// names (indexed_rows.h). The meta step converted the indices to Int64; every index is checked
// before anything is written.
#include "CPUNativeFunctions.h"

#include "kernels/copy_elements.h"
#include "kernels/indexed_rows.h"
#include "kernels/parallel_elements.h"
#include "kernels/strided_loop.h"
#include "runtime/thread_pool.h"

#include <backplane/sdk/reduction_dims.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace bp::cpu {
namespace {

// A tensor without one of its dims: the shape and strides of each slice along that dim.
struct Slices {
  DimValues<int64_t> sizes;
  DimValues<int64_t> strides;
  int64_t step;  // elements from one slice to the next
};

Slices slices_along(const TensorView& t, int64_t dim) {
  Slices s{DimValues<int64_t>(static_cast<size_t>(t.dim() - 1)),
           DimValues<int64_t>(static_cast<size_t>(t.dim() - 1)), t.stride(dim)};
  for (int64_t d = 0, k = 0; d < t.dim(); ++d) {
    if (d == dim) continue;
    s.sizes[static_cast<size_t>(k)] = t.size(d);
    s.strides[static_cast<size_t>(k++)] = t.stride(d);
  }
  return s;
}

bool is_dense(std::span<const int64_t> sizes, std::span<const int64_t> strides) {
  int64_t expected = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    if (sizes[d] != 1 && strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

// Copies one slice of `sizes` between two layouts of the same dtype: a memcpy when both are
// dense, else an element loop.
class SliceCopier {
 public:
  SliceCopier(DType dtype, std::span<const int64_t> sizes, std::span<const int64_t> dst_strides,
              std::span<const int64_t> src_strides)
      : dtype_(dtype), sizes_(sizes), dst_strides_(dst_strides), src_strides_(src_strides) {
    dense_ = is_dense(sizes, dst_strides) && is_dense(sizes, src_strides);
    bytes_ = element_size(dtype);
    for (int64_t s : sizes) bytes_ *= static_cast<size_t>(s);
  }

  // Whether a slice is one element, which gather_slices copies as a typed load and store.
  bool single_element() const { return bytes_ == element_size(dtype_); }

  void operator()(char* dst, const char* src) const {
    if (dense_) {
      std::memcpy(dst, src, bytes_);
    } else {
      copy_elements(sizes_, {dst, dtype_, dst_strides_},
                    {const_cast<char*>(src), dtype_, src_strides_});
    }
  }

 private:
  DType dtype_;
  std::span<const int64_t> sizes_, dst_strides_, src_strides_;
  bool dense_;
  size_t bytes_;
};

// Where gather_slices reads and writes, over the shape it walks (the positions of out's slices):
// element offsets of each position's slice in out and in self (before its index's step), and
// of its index.
struct GatherWalk {
  std::span<const int64_t> sizes;
  std::array<std::span<const int64_t>, 3> strides;  // out, self, index
};
enum : size_t { kOut, kSelf, kIndex };

// out's slice at each position of `walk` = self's slice `step` elements times the position's
// index further on, copied by `copy`; split across threads along the walk's first dimension.
// Single elements (index_select along the last dim) go through a typed loop of loads and
// stores, not a call each.
void gather_slices(const TensorView& self, const TensorView& out, const GatherWalk& walk,
                   const int64_t* indices, int64_t step, const SliceCopier& copy) {
  int64_t positions = 1;
  for (const int64_t size : walk.sizes) positions *= size;
  if (positions == 0 || out.numel() == 0) return;
  char* const out_data = out.data<char>();
  const char* const self_data = self.data<char>();
  const auto item = static_cast<int64_t>(element_size(out.dtype()));
  const auto gather_row = [&](const Offsets<3>& start, const Offsets<3>& stride, int64_t length) {
    const auto copy_typed = [&](auto element) {
      using U = decltype(element);
      auto* const to = reinterpret_cast<U*>(out_data);
      const auto* const from = reinterpret_cast<const U*>(self_data);
      // The usual row (index_select along the last dim of a contiguous tensor): out and the
      // indices side by side, self's row fixed, without the stride products.
      if (stride[kOut] == 1 && stride[kSelf] == 0 && stride[kIndex] == 1) {
        U* const row_to = to + start[kOut];
        const U* const row_from = from + start[kSelf];
        const int64_t* const row_indices = indices + start[kIndex];
        for (int64_t k = 0; k < length; ++k) row_to[k] = row_from[row_indices[k] * step];
        return;
      }
      for (int64_t k = 0; k < length; ++k) {
        const int64_t index = indices[start[kIndex] + k * stride[kIndex]];
        to[start[kOut] + k * stride[kOut]] = from[start[kSelf] + k * stride[kSelf] + index * step];
      }
    };
    if (copy.single_element()) {
      switch (item) {
        case 1: return copy_typed(uint8_t{});
        case 2: return copy_typed(uint16_t{});
        case 4: return copy_typed(uint32_t{});
        case 8: return copy_typed(uint64_t{});
        default: break;
      }
    }
    for (int64_t k = 0; k < length; ++k) {
      const int64_t index = indices[start[kIndex] + k * stride[kIndex]];
      copy(out_data + (start[kOut] + k * stride[kOut]) * item,
           self_data + (start[kSelf] + k * stride[kSelf] + index * step) * item);
    }
  };
  if (walk.sizes.empty()) {
    StridedLoop<3>(walk.sizes, walk.strides).for_each_row(gather_row);
    return;
  }
  const int64_t slice_elements = out.numel() / positions;
  const int64_t first_size = walk.sizes[0];
  const int64_t grain = grain_for(positions / first_size * slice_elements);
  parallel_for(first_size, grain, [&](int64_t begin, int64_t end) {
    DimValues<int64_t> chunk(walk.sizes.size());
    std::copy(walk.sizes.begin(), walk.sizes.end(), &chunk[0]);
    chunk[0] = end - begin;
    Offsets<3> start;
    for (size_t k = 0; k < 3; ++k) start[k] = begin * walk.strides[k][0];
    StridedLoop<3>(chunk.span(), walk.strides).for_each_row(gather_row, start);
  });
}

// `value` when it is in [0, rows), else an error naming the index and the size. Negative
// indices are errors, as in PyTorch's embedding and index_select.
int64_t checked_row(std::string_view op, int64_t value, int64_t rows) {
  if (value < 0 || value >= rows) {
    throw Error(BP_STATUS_INVALID_ARGUMENT, std::string(op) + ": index " + std::to_string(value) +
                                                " is out of range for a dimension of size " +
                                                std::to_string(rows));
  }
  return value;
}

}  // namespace

void index_select_out(const TensorView& self, int64_t dim, const TensorView& index,
                      const TensorView& out) {
  dim = wrap_dim("index_select", dim, self.dim());
  const int64_t count = index.numel();
  const int64_t* indices = index.data<int64_t>();
  const int64_t index_stride = index.dim() == 0 ? 0 : index.stride(0);
  const bool scalar = self.dim() == 0;
  const int64_t rows = scalar ? 1 : self.size(dim);
  for (int64_t i = 0; i < count; ++i) checked_row("index_select", indices[i * index_stride], rows);

  const Slices from =
      scalar ? Slices{DimValues<int64_t>(0), DimValues<int64_t>(0), 0} : slices_along(self, dim);
  const Slices to = scalar ? from : slices_along(out, dim);
  // Walks the dims before `dim`, then the indices, each position copying the slice of the dims
  // after it: for a dim other than the first, each step then reads near the last, where one
  // slice after another (a column at a time, for dim 1 of a matrix) would cross the whole
  // tensor for each index.
  const auto before = static_cast<size_t>(scalar ? 0 : dim);
  const auto split = [before](const DimValues<int64_t>& values) {
    return std::pair{values.span().first(before), values.span().subspan(before)};
  };
  const auto [outer_sizes, inner_sizes] = split(from.sizes);
  const auto [from_outer, from_inner] = split(from.strides);
  const auto [to_outer, to_inner] = split(to.strides);
  DimValues<int64_t> walk_sizes(before + 1), out_strides(before + 1), self_strides(before + 1),
      index_strides(before + 1);
  for (size_t d = 0; d < before; ++d) {
    walk_sizes[d] = outer_sizes[d];
    out_strides[d] = to_outer[d];
    self_strides[d] = from_outer[d];
  }
  walk_sizes[before] = count;
  out_strides[before] = to.step;
  index_strides[before] = index_stride;
  const GatherWalk walk{walk_sizes.span(),
                        {out_strides.span(), self_strides.span(), index_strides.span()}};
  gather_slices(self, out, walk, indices, from.step,
                SliceCopier(out.dtype(), inner_sizes, to_inner, from_inner));
}

void embedding_out(const TensorView& weight, const TensorView& indices,
                   int64_t /*padding_idx: only changes gradients*/, bool /*scale_grad_by_freq*/,
                   bool /*sparse*/, const TensorView& out) {
  const int64_t rows = weight.size(0);
  const int64_t* values = indices.data<int64_t>();
  const StridedLoop<1> check_loop(indices.sizes(), {indices.strides()});
  check_loop.for_each_row([&](const Offsets<1>& start, const Offsets<1>& step, int64_t length) {
    for (int64_t k = 0; k < length; ++k)
      checked_row("embedding", values[start[0] + k * step[0]], rows);
  });

  // out[m..., :] = weight[indices[m...], :]: out's leading dims are indices' dims.
  const int64_t width[] = {weight.size(1)};
  const int64_t weight_stride[] = {weight.stride(1)};
  const int64_t out_stride[] = {out.stride(out.dim() - 1)};
  const DimValues<int64_t> no_strides(static_cast<size_t>(indices.dim()));
  const GatherWalk walk{indices.sizes(),
                        {out.strides().first(static_cast<size_t>(indices.dim())), no_strides.span(),
                         indices.strides()}};
  gather_slices(weight, out, walk, values, weight.stride(0),
                SliceCopier(out.dtype(), width, out_stride, weight_stride));
}

// The meta step made grad_output and indices contiguous: grad_output is (indices, embedding_dim).
void embedding_dense_backward_out(const TensorView& grad_output, const TensorView& indices,
                                  int64_t num_weights, int64_t padding_idx, bool scale_grad_by_freq,
                                  const TensorView& out) {
  constexpr std::string_view op = "embedding_dense_backward";
  require_dtype(op, "grad_output", grad_output, out.dtype());
  const int64_t count = indices.numel();
  const plugin::PositionsByRow positions(
      op, std::span(indices.data<const int64_t>(), static_cast<size_t>(count)), num_weights);
  // -1 is no padding row; other negative values count from the end, as embedding's do.
  const int64_t padding_row = padding_idx < -1 ? padding_idx + num_weights : padding_idx;
  plugin::visit_dtype<kernel_dtypes::embedding_dense_backward_out>(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    add_indexed_slices<T, C>(out.data<T>(), nullptr, grad_output.data<const T>(), /*outer=*/1,
                             num_weights, count, out.size(1), positions, [&](int64_t row) {
                               if (row == padding_row) return C(0);
                               if (!scale_grad_by_freq) return C(1);
                               return C(1) / static_cast<C>(positions.of(row).size());
                             });
  });
}

// The meta step made self, index and source contiguous: self is (outer, rows, inner) around
// dim, source (outer, index.numel(), inner).
void index_add_out(const TensorView& self, int64_t dim, const TensorView& index,
                   const TensorView& source, const bp::Scalar& alpha, const TensorView& out) {
  constexpr std::string_view op = "index_add";
  require_dtype(op, "source", source, out.dtype());
  require_dtype(op, "self", self, out.dtype());
  const int64_t count = index.numel();
  int64_t outer = 1;
  int64_t rows = 1;
  int64_t inner = 1;
  if (self.dim() > 0) {
    dim = wrap_dim(op, dim, self.dim());
    for (int64_t d = 0; d < self.dim(); ++d) {
      (d < dim ? outer : d == dim ? rows : inner) *= self.size(d);
    }
  }
  const plugin::PositionsByRow positions(
      op, std::span(index.data<const int64_t>(), static_cast<size_t>(count)), rows);
  plugin::visit_dtype<kernel_dtypes::index_add_out>(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const C factor = alpha.to<C>();
    add_indexed_slices<T, C>(out.data<T>(), self.data<const T>(), source.data<const T>(), outer,
                             rows, count, inner, positions, [factor](int64_t) { return factor; });
  });
}

}  // namespace bp::cpu

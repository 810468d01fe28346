// embedding and index_select: out's slice i along a dim is self's slice index[i]. The meta step
// converted the indices to Int64; every index is checked before anything is written.
#include "CPUNativeFunctions.h"

#include "copy.h"
#include "reduction.h"

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
// dense (of a constant size for a single element, which compiles to one move), else an element
// loop.
class SliceCopier {
 public:
  SliceCopier(DType dtype, std::span<const int64_t> sizes, std::span<const int64_t> dst_strides,
              std::span<const int64_t> src_strides)
      : dtype_(dtype), sizes_(sizes), dst_strides_(dst_strides), src_strides_(src_strides) {
    dense_ = is_dense(sizes, dst_strides) && is_dense(sizes, src_strides);
    bytes_ = element_size(dtype);
    for (int64_t s : sizes) bytes_ *= static_cast<size_t>(s);
  }

  void operator()(char* dst, const char* src) const {
    if (dense_) {
      switch (bytes_) {
        case 1: std::memcpy(dst, src, 1); break;
        case 2: std::memcpy(dst, src, 2); break;
        case 4: std::memcpy(dst, src, 4); break;
        case 8: std::memcpy(dst, src, 8); break;
        default: std::memcpy(dst, src, bytes_);
      }
    } else {
      copy_elements(sizes_, {dst, dtype_, dst_strides_}, {const_cast<char*>(src), dtype_, src_strides_});
    }
  }

 private:
  DType dtype_;
  std::span<const int64_t> sizes_, dst_strides_, src_strides_;
  bool dense_;
  size_t bytes_;
};

// `value` when it is in [0, rows), else an error naming the index and the size. Negative
// indices are errors, as in PyTorch's embedding and index_select.
int64_t checked_row(std::string_view op, int64_t value, int64_t rows) {
  if (value < 0 || value >= rows) {
    throw Error(BP_STATUS_INVALID_ARGUMENT,
                std::string(op) + ": index " + std::to_string(value) +
                    " is out of range for a dimension of size " + std::to_string(rows));
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

  const Slices from = scalar ? Slices{DimValues<int64_t>(0), DimValues<int64_t>(0), 0}
                             : slices_along(self, dim);
  const Slices to = scalar ? from : slices_along(out, dim);
  // Index by index inside each index of the dims before `dim`, each copying the slice of the
  // dims after it: for a dim other than the first, each step then reads near the last, where
  // one slice after another (a column at a time, for dim 1 of a matrix) would cross the whole
  // tensor for each index.
  const auto before = static_cast<size_t>(scalar ? 0 : dim);
  const auto split = [before](const DimValues<int64_t>& values) {
    return std::pair{values.span().first(before), values.span().subspan(before)};
  };
  const auto [outer_sizes, inner_sizes] = split(from.sizes);
  const auto [from_outer, from_inner] = split(from.strides);
  const auto [to_outer, to_inner] = split(to.strides);
  const SliceCopier copy(out.dtype(), inner_sizes, to_inner, from_inner);
  const auto item = static_cast<int64_t>(element_size(out.dtype()));
  const StridedLoop<2> outer(outer_sizes, {from_outer, to_outer});
  outer.for_each_row([&](const Offsets<2>& start, const Offsets<2>& step, int64_t length) {
    for (int64_t k = 0; k < length; ++k) {
      const char* source = self.data<char>() + (start[0] + k * step[0]) * item;
      char* target = out.data<char>() + (start[1] + k * step[1]) * item;
      for (int64_t i = 0; i < count; ++i) {
        copy(target + i * to.step * item, source + indices[i * index_stride] * from.step * item);
      }
    }
  });
}

void embedding_out(const TensorView& weight, const TensorView& indices,
                   int64_t /*padding_idx: only changes gradients*/,
                   bool /*scale_grad_by_freq*/, bool /*sparse*/, const TensorView& out) {
  const int64_t rows = weight.size(0);
  const int64_t* values = indices.data<int64_t>();
  const StridedLoop<1> check_loop(indices.sizes(), {indices.strides()});
  check_loop.for_each_row([&](const Offsets<1>& start, const Offsets<1>& step, int64_t length) {
    for (int64_t k = 0; k < length; ++k) checked_row("embedding", values[start[0] + k * step[0]], rows);
  });

  // out[m..., :] = weight[indices[m...], :]: out's leading dims are indices' dims.
  const int64_t width[] = {weight.size(1)};
  const int64_t weight_stride[] = {weight.stride(1)};
  const int64_t out_stride[] = {out.stride(out.dim() - 1)};
  const SliceCopier copy(out.dtype(), width, out_stride, weight_stride);
  const auto item = static_cast<int64_t>(element_size(out.dtype()));
  const StridedLoop<2> rows_loop(indices.sizes(),
                                 {indices.strides(), out.strides().first(static_cast<size_t>(indices.dim()))});
  rows_loop.for_each_row([&](const Offsets<2>& start, const Offsets<2>& step, int64_t length) {
    for (int64_t k = 0; k < length; ++k) {
      copy(out.data<char>() + (start[1] + k * step[1]) * item,
           weight.data<char>() + values[start[0] + k * step[0]] * weight.stride(0) * item);
    }
  });
}

}  // namespace bp::cpu

// embedding and index_select: out's slice i along one dim is the source's slice index[i], as one
// gather over out's elements (kernels/gather.cu); and their gradients, embedding_dense_backward
// and index_add: slices summed into the rows an index names, without atomics
// (kernels/indexed_rows.cu). The meta step converted the indices to Int64.
// An index out of range is an error naming it, as on the CPU backend, even where out is empty;
// out is then left partly written.
#include "CUDANativeFunctions.h"

#include "runtime/tensor_access.h"

#include <algorithm>
#include <array>
#include <string>
#include <string_view>

namespace bp::cuda {
namespace {

// Walks out's elements with the source (whose picked dim contributes index * index_stride
// instead) and the index tensor (read at each element's position along the picked dims). Every
// one of the `index_count` indices is checked, also where out is empty (another of its dims is 0),
// as on the CPU backend: that walk reads and writes one element of scratch memory instead.
void gather_into(std::string_view op, const TensorView& out, const Operand& src,
                 const Operand& index, int64_t index_count, int64_t index_stride, int64_t limit) {
  const OnDevice on(out);
  Device& device = on.device();
  DeviceScratch scratch(device);
  const auto gather = [&](const ElementwiseLaunch<3>& launch, int64_t stride) {
    const std::optional<int64_t> bad =
        launch_gather(element_size(out.dtype()), launch, stride, limit, scratch);
    if (bad) {
      throw plugin::Error(BP_STATUS_INVALID_ARGUMENT,
                          std::string(op) + ": index " + std::to_string(*bad) +
                              " is out of range for a dimension of size " + std::to_string(limit));
    }
  };
  if (out.numel() > 0) {
    for_each_launch<3>(device, out.sizes(), {operand_of(out), src, index},
                       [&](const ElementwiseLaunch<3>& launch) { gather(launch, index_stride); });
    return;
  }
  if (index_count == 0) return;
  DimValues<int64_t> sizes(static_cast<size_t>(out.dim()), 1), no_strides(sizes.size(), 0);
  for (size_t d = 0; d < sizes.size(); ++d)
    sizes[d] = std::max<int64_t>(out.size(static_cast<int64_t>(d)), 1);
  char* element = static_cast<char*>(scratch.allocate(sizeof(int64_t)));
  const Operand one_element{element, no_strides.span(), element_size(out.dtype())};
  for_each_launch<3>(device, sizes.span(), {one_element, one_element, index},
                     [&](const ElementwiseLaunch<3>& launch) { gather(launch, 0); });
}

}  // namespace

void index_select_out(const TensorView& self, int64_t dim, const TensorView& index,
                      const TensorView& out) {
  require_dtype("index_select", "index", index, DType::Int64);
  require_dtype("index_select", "out", out, self.dtype());
  if (self.dim() == 0) {  // one element, picked by index 0
    gather_into("index_select", out, operand_of(self), operand_of(index), index.numel(), 0, 1);
    return;
  }
  dim = wrap_dim("index_select", dim, self.dim());
  const auto d = static_cast<size_t>(dim);
  DimValues<int64_t> src_strides(static_cast<size_t>(self.dim()), 0),
      index_strides(src_strides.size(), 0);
  for (size_t k = 0; k < src_strides.size(); ++k)
    src_strides[k] = k == d ? 0 : self.stride(static_cast<int64_t>(k));
  index_strides[d] = index.dim() == 0 ? 0 : index.stride(0);
  gather_into("index_select", out,
              {address_of(self), src_strides.span(), element_size(self.dtype())},
              {address_of(index), index_strides.span(), element_size(DType::Int64)}, index.numel(),
              self.stride(dim), self.size(dim));
}

// out[m..., :] = weight[indices[m...], :]: out's leading dims are indices' dims.
void embedding_out(const TensorView& weight, const TensorView& indices,
                   int64_t /*padding_idx: only changes gradients*/, bool /*scale_grad_by_freq*/,
                   bool /*sparse*/, const TensorView& out) {
  require_dtype("embedding", "indices", indices, DType::Int64);
  require_dtype("embedding", "out", out, weight.dtype());
  plugin::check(weight.dim() == 2 && out.dim() == indices.dim() + 1,
                "embedding: expected a 2-D weight and an output of indices' dims plus one");
  const size_t last = static_cast<size_t>(indices.dim());
  DimValues<int64_t> weight_strides(last + 1, 0), index_strides(last + 1, 0);
  weight_strides[last] = weight.stride(1);
  for (size_t k = 0; k < last; ++k) index_strides[k] = indices.stride(static_cast<int64_t>(k));
  gather_into("embedding", out,
              {address_of(weight), weight_strides.span(), element_size(weight.dtype())},
              {address_of(indices), index_strides.span(), element_size(DType::Int64)},
              indices.numel(), weight.stride(0), weight.size(0));
}

namespace {

// The sums of `rows` into `out` (kernels/indexed_rows.cu), written densely and copied into out
// where it is not; an index out of range is an error naming it, as on the CPU backend.
template <typename Kernel>
void sum_indexed_rows(std::string_view op, IndexedRows rows, const TensorView& out) {
  const OnDevice on(out);
  Device& device = on.device();
  DeviceScratch scratch(device);
  const DenseOutput dense(device, out, scratch);
  rows.out = dense.data();
  const std::optional<int64_t> bad =
      launch_indexed_row_sums<Kernel>(out.dtype(), rows, device.launch_target(), scratch);
  if (bad) {
    throw plugin::Error(BP_STATUS_INVALID_ARGUMENT,
                        std::string(op) + ": index " + std::to_string(*bad) +
                            " is out of range for a dimension of size " +
                            std::to_string(rows.rows));
  }
  dense.copy_back();
}

}  // namespace

// out's row r = the sum of grad_output's rows at the positions whose index is r (scaled as
// padding_idx and scale_grad_by_freq say). The meta step made grad_output (indices' shape plus
// embedding_dim) and the Int64 indices contiguous.
void embedding_dense_backward_out(const TensorView& grad_output, const TensorView& indices,
                                  int64_t num_weights, int64_t padding_idx, bool scale_grad_by_freq,
                                  const TensorView& out) {
  constexpr std::string_view op = "embedding_dense_backward";
  require_dtype(op, "grad_output", grad_output, out.dtype());
  require_dtype(op, "indices", indices, DType::Int64);
  IndexedRows rows;
  rows.rows = num_weights;
  rows.n = indices.numel();
  rows.inner = out.size(1);
  rows.index = reinterpret_cast<const int64_t*>(address_of(indices));
  rows.source = address_of(grad_output);
  rows.embedding = true;
  // -1 is no padding row; other negative values count from the end, as embedding's do.
  rows.padding_row = padding_idx < -1 ? padding_idx + num_weights : padding_idx;
  rows.scale_by_frequency = scale_grad_by_freq;
  sum_indexed_rows<kernel_dtypes::embedding_dense_backward_out>(op, rows, out);
}

// out = self with alpha * source's slices along dim added into the slices index names, in the
// order of index. The meta step made self, index and source contiguous: self is
// (outer, rows, inner) around dim, source (outer, index.numel(), inner).
void index_add_out(const TensorView& self, int64_t dim, const TensorView& index,
                   const TensorView& source, const Scalar& alpha, const TensorView& out) {
  constexpr std::string_view op = "index_add";
  require_dtype(op, "self", self, out.dtype());
  require_dtype(op, "source", source, out.dtype());
  require_dtype(op, "index", index, DType::Int64);
  IndexedRows rows;
  rows.rows = 1;
  if (self.dim() > 0) {
    dim = wrap_dim(op, dim, self.dim());
    for (int64_t d = 0; d < self.dim(); ++d)
      (d < dim ? rows.outer : d == dim ? rows.rows : rows.inner) *= self.size(d);
  }
  rows.n = index.numel();
  rows.index = reinterpret_cast<const int64_t*>(address_of(index));
  rows.base = address_of(self);
  rows.source = address_of(source);
  rows.alpha = alpha;
  sum_indexed_rows<kernel_dtypes::index_add_out>(op, rows, out);
}

}  // namespace bp::cuda

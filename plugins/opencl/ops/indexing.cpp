// embedding and index_select: out's slice i along a dim is the source's slice index[i], one
// gather_bits<width> kernel (kernels/copy.cl) over out's elements. Their gradients,
// embedding_dense_backward and index_add, add slices into the ones an index names: the host
// groups the index's positions by the row they name (bp::plugin::PositionsByRow), and one
// indexed_add kernel (kernels/elementwise.cl) gives each element of out its own sum, in the
// index's order, as the CPU backend sums. The meta step converted the indices to Int64. They
// are read back and checked on the host before anything is written, so that an index out of
// range is the CPU backend's error, not a read past the buffer.
#include "OpenCLNativeFunctions.h"

#include "runtime/cl_call.h"
#include "runtime/kernel_launch.h"

#include <backplane/sdk/positions_by_row.hpp>
#include <backplane/sdk/strided_loop.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bp::opencl {
namespace {

// Every index, checked to lie in [0, rows): negative ones are errors too, as in PyTorch's
// embedding and index_select.
void check_indices(std::string_view op, const TensorView& index, int64_t rows) {
  require_dtype(op, "index", index, DType::Int64);
  for (const int64_t value : read_int64_elements(index, "the indices of " + std::string(op))) {
    if (value < 0 || value >= rows) {
      throw plugin::Error(BP_STATUS_INVALID_ARGUMENT,
                          std::string(op) + ": index " + std::to_string(value) +
                              " is out of range for a dimension of size " + std::to_string(rows));
    }
  }
}

// out = source at (source's offset over out's shape) + index * step, for operands given as
// strides over out's shape.
void gather(std::string_view op, const TensorView& out, const TensorView& source,
            std::span<const int64_t> source_strides, const TensorView& index,
            std::span<const int64_t> index_strides, int64_t step) {
  Device& device = device_of(out);
  require_dtype(op, "source", source, out.dtype());
  if (out.numel() == 0) return;
  const std::string kernel = "gather_bits" + std::to_string(8 * element_size(out.dtype()));
  KernelArgs tail;
  tail.add(step);
  launch_elementwise(
      device, device.program(KernelSource::Copy, std::nullopt), kernel.c_str(), op, out.sizes(),
      {operand_of(out), {buffer_of(source), source_strides}, {buffer_of(index), index_strides}},
      tail);
}

// out = base (zeros without one) + factor(r) times the slices of `source` that `positions` name
// for row r of out along `dim`, where factor(r) is alpha, 0 at padding_row, divided by the row's
// count with scale_by_count. source_strides walk source's slice at position 0 over out's shape
// (0 along dim); position k's slice is k * step elements further.
void add_indexed_slices(std::string_view op, const TensorView& out, const TensorView* base,
                        const TensorView& source, std::span<const int64_t> source_strides,
                        int64_t step, int64_t dim, const plugin::PositionsByRow& positions,
                        const Scalar& alpha, int64_t padding_row, bool scale_by_count) {
  Device& device = device_of(out);
  device.require_double_precision_for(op, out.dtype());
  if (out.numel() == 0) return;
  const std::string about = " of " + std::string(op) + "'s index";
  const OwnedBuffer starts = upload_table(device, positions.starts(), "the row starts" + about);
  const OwnedBuffer sorted = upload_table(device, positions.positions(), "the positions" + about);
  // The starts table as an operand whose offset at each element of out is the element's row.
  plugin::DimValues<int64_t> row_strides(static_cast<size_t>(out.dim()), 0);
  if (out.dim() > 0) row_strides[static_cast<size_t>(dim)] = 1;
  KernelArgs tail;
  tail.add(sorted.get())
      .add(step)
      .add(compute_scalar(out.dtype(), alpha))
      .add(cl_int{base != nullptr})
      .add(padding_row)
      .add(cl_int{scale_by_count});
  launch_elementwise(device, device.program(KernelSource::Elementwise, out.dtype()), "indexed_add",
                     op, out.sizes(),
                     {operand_of(out),
                      operand_of(base ? *base : out),
                      {buffer_of(source), source_strides},
                      {Buffer{starts.get(), 0}, row_strides.span()}},
                     tail);
}

}  // namespace

void index_select_out(const TensorView& self, int64_t dim, const TensorView& index,
                      const TensorView& out) {
  constexpr std::string_view op = "index_select";
  plugin::require_dtype_of<plugin::kernel_dtypes::index_select_out>(out.dtype());
  const bool scalar = self.dim() == 0;
  dim = scalar ? 0 : wrap_dim(op, dim, self.dim());
  check_indices(op, index, scalar ? 1 : self.size(dim));
  const size_t ndim = static_cast<size_t>(out.dim());
  // Over out's shape: self without its step along `dim`; the index only along `dim`.
  plugin::DimValues<int64_t> self_strides(ndim, 0), index_strides(ndim, 0);
  for (size_t d = 0; d < ndim; ++d) {
    if (static_cast<int64_t>(d) == dim) {
      index_strides[d] = index.dim() == 0 ? 0 : index.stride(0);
    } else {
      self_strides[d] = self.stride(static_cast<int64_t>(d));
    }
  }
  gather(op, out, self, self_strides.span(), index, index_strides.span(),
         scalar ? 0 : self.stride(dim));
}

// out[m..., j] = weight[indices[m...], j]: out's leading dims are the indices' dims.
void embedding_out(const TensorView& weight, const TensorView& indices,
                   int64_t /*padding_idx: only changes gradients*/, bool /*scale_grad_by_freq*/,
                   bool /*sparse*/, const TensorView& out) {
  constexpr std::string_view op = "embedding";
  plugin::require_dtype_of<plugin::kernel_dtypes::embedding_out>(out.dtype());
  check_indices(op, indices, weight.size(0));
  const size_t ndim = static_cast<size_t>(out.dim());
  plugin::DimValues<int64_t> weight_strides(ndim, 0), index_strides(ndim, 0);
  for (size_t d = 0; d + 1 < ndim; ++d) index_strides[d] = indices.stride(static_cast<int64_t>(d));
  weight_strides[ndim - 1] = weight.stride(1);
  gather(op, out, weight, weight_strides.span(), indices, index_strides.span(), weight.stride(0));
}

// out = self, with alpha times source's slice i along dim added to the slice index[i].
void index_add_out(const TensorView& self, int64_t dim, const TensorView& index,
                   const TensorView& source, const Scalar& alpha, const TensorView& out) {
  constexpr std::string_view op = "index_add";
  plugin::require_dtype_of<plugin::kernel_dtypes::index_add_out>(out.dtype());
  plugin::require_dtypes(op, {{"self", &self}, {"source", &source}}, out.dtype());
  require_dtype(op, "index", index, DType::Int64);
  const bool scalar = self.dim() == 0;
  dim = scalar ? 0 : wrap_dim(op, dim, self.dim());
  plugin::check(source.dim() == self.dim(), std::string(op) + ": source needs self's dims");
  const plugin::PositionsByRow positions(op, read_int64_elements(index, "the index of index_add"),
                                         scalar ? 1 : self.size(dim));
  // Over out's shape: source without its step along dim.
  plugin::DimValues<int64_t> source_strides(static_cast<size_t>(source.dim()), 0);
  for (int64_t d = 0; d < source.dim(); ++d) {
    if (d != dim) source_strides[static_cast<size_t>(d)] = source.stride(d);
  }
  add_indexed_slices(op, out, &self, source, source_strides.span(), scalar ? 0 : source.stride(dim),
                     dim, positions, alpha,
                     /*padding_row=*/-1, /*scale_by_count=*/false);
}

// out[r] = the sum of grad_output's rows at the positions of the indices naming r: grad_output is
// (indices' dims..., embedding_dim), out (num_weights, embedding_dim). padding_idx -1 is none;
// other negative values count from the end, as embedding's do.
void embedding_dense_backward_out(const TensorView& grad_output, const TensorView& indices,
                                  int64_t num_weights, int64_t padding_idx, bool scale_grad_by_freq,
                                  const TensorView& out) {
  constexpr std::string_view op = "embedding_dense_backward";
  plugin::require_dtype_of<plugin::kernel_dtypes::embedding_dense_backward_out>(out.dtype());
  require_dtype(op, "grad_output", grad_output, out.dtype());
  require_dtype(op, "indices", indices, DType::Int64);
  const plugin::PositionsByRow positions(
      op, read_int64_elements(indices, "the indices of embedding_dense_backward"), num_weights);
  // Position k's row is k * step elements on: the leading dims must lay out as one.
  const int64_t leading = grad_output.dim() - 1;
  int64_t step = 0;
  std::optional<int64_t> run_end;  // the stride that continues the leading dims walked so far
  for (int64_t d = leading - 1; d >= 0; --d) {
    if (grad_output.size(d) == 1) continue;
    if (!run_end) {
      step = grad_output.stride(d);
    } else if (grad_output.stride(d) != run_end) {
      throw plugin::Error(BP_STATUS_UNIMPLEMENTED,
                          std::string(op) +
                              ": the OpenCL kernel takes a grad_output whose leading dims lay "
                              "out as one; make it contiguous");
    }
    run_end = grad_output.stride(d) * grad_output.size(d);
  }
  const int64_t source_strides[] = {0, grad_output.stride(leading)};
  add_indexed_slices(op, out, nullptr, grad_output, source_strides, step, /*dim=*/0, positions,
                     /*alpha=*/1, padding_idx < -1 ? padding_idx + num_weights : padding_idx,
                     scale_grad_by_freq);
}

}  // namespace bp::opencl

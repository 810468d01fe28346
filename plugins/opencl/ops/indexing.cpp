// embedding and index_select: out's slice i along a dim is the source's slice index[i], one
// gather_bits<width> kernel (kernels/copy.cl) over out's elements. The meta step converted the
// indices to Int64. They are read back and checked on the host before anything is written, so
// that an index out of range is the CPU backend's error, not a read past the buffer.
#include "OpenCLNativeFunctions.h"

#include "runtime/cl_call.h"
#include "runtime/kernel_launch.h"

#include <backplane/sdk/strided_loop.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bp::opencl {
namespace {

// Every index, checked to lie in [0, rows): negative ones are errors too, as in PyTorch's
// embedding and index_select. Reads the elements `index` spans, then walks its strides.
void check_indices(std::string_view op, const TensorView& index, int64_t rows) {
  require_dtype(op, "index", index, DType::Int64);
  if (index.numel() == 0) return;
  int64_t span = 1;
  for (int64_t d = 0; d < index.dim(); ++d) span += (index.size(d) - 1) * index.stride(d);
  Device& device = device_of(index);
  const Buffer buffer = buffer_of(index);
  std::vector<int64_t> values(static_cast<size_t>(span));
  check_cl(clEnqueueReadBuffer(device.queue(), buffer.mem, CL_TRUE,
                               static_cast<size_t>(buffer.base) * sizeof(int64_t),
                               values.size() * sizeof(int64_t), values.data(), 0, nullptr, nullptr),
           "reading the indices of " + std::string(op) + " from " + device.label());
  const plugin::StridedLoop<1> loop(index.sizes(), {index.strides()});
  loop.for_each_row([&](const plugin::Offsets<1>& start, const plugin::Offsets<1>& step,
                        int64_t length) {
    for (int64_t k = 0; k < length; ++k) {
      const int64_t value = values[static_cast<size_t>(start[0] + k * step[0])];
      if (value < 0 || value >= rows) {
        throw plugin::Error(BP_STATUS_INVALID_ARGUMENT,
                            std::string(op) + ": index " + std::to_string(value) +
                                " is out of range for a dimension of size " + std::to_string(rows));
      }
    }
  });
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

}  // namespace bp::opencl

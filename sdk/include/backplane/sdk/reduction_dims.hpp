// Which dimensions a reduction covers, for kernels of reductions and other per-group ops
// (softmax, layer norm) on any backend: dims wrapped as PyTorch wraps them, and strides that
// address the output over the input's dimensions.
#pragma once

#include <backplane/sdk/status.hpp>
#include <backplane/sdk/strided_loop.hpp>
#include <backplane/sdk/tensor_view.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace bp::plugin {

// `dim` for a tensor of `ndim` dimensions, negative values counting from the end. A 0-dim
// tensor accepts 0 and -1, as in PyTorch.
inline int64_t wrap_dim(std::string_view op, int64_t dim, int64_t ndim) {
  const int64_t range = ndim == 0 ? 1 : ndim;
  if (dim < -range || dim >= range) {
    throw Error(BP_STATUS_INVALID_ARGUMENT, std::string(op) + ": dimension " + std::to_string(dim) +
                                                " is out of range for a tensor of " +
                                                std::to_string(ndim) + " dimensions");
  }
  return dim < 0 ? dim + range : dim;
}

// Which of `ndim` dimensions a reduction over `dims` covers; an empty list means all of them
// (PyTorch's rule for sum, mean and amax).
inline DimValues<bool> reduced_dims(std::string_view op, int64_t ndim,
                                    std::span<const int64_t> dims) {
  DimValues<bool> reduced(static_cast<size_t>(ndim), dims.empty());
  for (int64_t dim : dims) {
    const int64_t d = wrap_dim(op, dim, ndim);
    if (d < ndim) reduced[static_cast<size_t>(d)] = true;  // a 0-dim tensor has nothing to mark
  }
  return reduced;
}

inline DimValues<bool> single_reduced_dim(std::string_view op, int64_t ndim, int64_t dim) {
  return reduced_dims(op, ndim, std::span<const int64_t>(&dim, 1));
}

// Strides that address a reduction's output over the input's dimensions: 0 along the reduced
// ones, which the output keeps as size 1 (keepdim) or leaves out.
inline DimValues<int64_t> reduced_output_strides(const TensorView& out,
                                                 const DimValues<bool>& reduced, bool keepdim) {
  DimValues<int64_t> strides(reduced.size(), 0);
  int64_t out_dim = 0;
  for (size_t d = 0; d < reduced.size(); ++d) {
    if (!reduced[d]) {
      strides[d] = out.stride(out_dim++);
    } else if (keepdim) {
      ++out_dim;
    }
  }
  return strides;
}

}  // namespace bp::plugin

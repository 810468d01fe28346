// Which dimensions a reduction covers, for kernels of reductions and other per-group ops
// (softmax, layer norm) on any backend: dims wrapped as PyTorch wraps them, and strides that
// address the output over the input's dimensions.
#pragma once

#include <backplane/sdk/status.hpp>
#include <backplane/sdk/strided_loop.hpp>
#include <backplane/sdk/tensor_view.hpp>

#include <cstdint>
#include <optional>
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

// An optional dim list, as sum and mean take it: absent, every dimension.
inline DimValues<bool> reduced_dims(std::string_view op, int64_t ndim,
                                    std::optional<std::span<const int64_t>> dims) {
  return reduced_dims(op, ndim, dims.value_or(std::span<const int64_t>()));
}

inline DimValues<bool> single_reduced_dim(std::string_view op, int64_t ndim, int64_t dim) {
  return reduced_dims(op, ndim, std::span<const int64_t>(&dim, 1));
}

// An optional single dim, as argmax takes it: absent, every dimension (the flattened input).
inline DimValues<bool> single_reduced_dim_or_all(std::string_view op, int64_t ndim,
                                                 std::optional<int64_t> dim) {
  return dim ? single_reduced_dim(op, ndim, *dim)
             : DimValues<bool>(static_cast<size_t>(ndim), true);
}

// The trailing dimensions, as many as `normalized_shape` has, of `ndim`: those layer norm and
// RMS norm normalise over (the meta step has matched their sizes against the input's).
inline DimValues<bool> trailing_dims(std::string_view op, int64_t ndim,
                                     std::span<const int64_t> normalized_shape) {
  const auto count = static_cast<int64_t>(normalized_shape.size());
  check(count <= ndim, std::string(op) + ": normalized_shape has more dimensions than the input");
  DimValues<bool> normalized(static_cast<size_t>(ndim), false);
  for (int64_t d = ndim - count; d < ndim; ++d) normalized[static_cast<size_t>(d)] = true;
  return normalized;
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

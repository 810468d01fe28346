// Meta functions of the ops that pick elements by an index tensor: embedding and index_select,
// and their gradients embedding_dense_backward and index_add. Indices reach the kernel as Int64,
// whatever integer dtype the caller used, so that a backend implements one index type.
#include "meta_support.h"

#include <core_generated/MetaFunctions.h>

#include <fmt/format.h>

#include <algorithm>

namespace bp::meta {

using support::prepare_indices;

// embedding: weight is 2-D (num_embeddings, embedding_dim); indices are Int32 or Int64 of any
// shape; padding_idx is -1 or wraps into [0, num_embeddings). out is indices' shape plus
// embedding_dim, with weight's dtype. The kernel refuses an index out of range.
std::array<OutputSpec, 1> embedding_out(Tensor& weight, Tensor& indices, int64_t padding_idx,
                                        bool /*scale_grad_by_freq*/, bool /*sparse*/) {
  const Device device = support::common_device({&weight, &indices});
  if (weight.dim() != 2) {
    throw Error(
        fmt::format("embedding: expected a 2-D weight (num_embeddings, embedding_dim), "
                    "got shape {}",
                    detail::format_shape(weight.sizes())));
  }
  const int64_t rows = weight.size(0);
  if (padding_idx != -1 && (padding_idx < -rows || padding_idx >= rows)) {
    throw Error(fmt::format("embedding: padding_idx {} is out of range for {} embeddings",
                            padding_idx, rows));
  }
  prepare_indices("embedding", "indices", indices);
  DimVector shape(indices.sizes());
  shape.push_back(weight.size(1));
  return {OutputSpec{std::move(shape), weight.dtype(), device}};
}

// index_select: index is a 0-D or 1-D Int32 or Int64 tensor; dim wraps as PyTorch's does. out is
// self's shape with dim's size replaced by the number of indices (a 0-D self takes one index
// and gives a 0-D out), with self's dtype. The kernel refuses an index out of range.
std::array<OutputSpec, 1> index_select_out(Tensor& self, int64_t dim, Tensor& index) {
  const Device device = support::common_device({&self, &index});
  if (index.dim() > 1) {
    throw Error(
        fmt::format("index_select: expected a 0-D or 1-D index, got shape {}; flatten it "
                    "with .reshape({{-1}})",
                    detail::format_shape(index.sizes())));
  }
  prepare_indices("index_select", "index", index);
  const int64_t wrapped = detail::wrap_dim("index_select", dim, self.dim());
  DimVector shape(self.sizes());
  if (self.dim() == 0) {
    if (index.numel() != 1) {
      throw Error(
          fmt::format("index_select: a 0-D self takes exactly one index, got {}", index.numel()));
    }
  } else {
    shape[wrapped] = index.numel();
  }
  return {OutputSpec{std::move(shape), self.dtype(), device}};
}

// embedding_dense_backward: grad_output has indices' shape plus one last dim (embedding_dim);
// indices are Int32 or Int64; num_weights is not negative; padding_idx is -1 (none) or wraps
// into [0, num_weights) as embedding's does. grad_output and indices reach the kernel
// contiguous. out is (num_weights, embedding_dim) with grad_output's dtype. The kernel refuses
// an index out of range.
std::array<OutputSpec, 1> embedding_dense_backward_out(Tensor& grad_output, Tensor& indices,
                                                       int64_t num_weights, int64_t padding_idx,
                                                       bool /*scale_grad_by_freq*/) {
  constexpr std::string_view op = "embedding_dense_backward";
  const Device device = support::common_device({&grad_output, &indices});
  prepare_indices(op, "indices", indices);
  const IntArrayRef grad_sizes = grad_output.sizes();
  const IntArrayRef index_sizes = indices.sizes();
  if (grad_output.dim() != indices.dim() + 1 ||
      !std::equal(index_sizes.begin(), index_sizes.end(), grad_sizes.begin())) {
    throw Error(fmt::format(
        "{}: expected grad_output of shape [*indices.shape, embedding_dim], with indices of "
        "shape {}, but got grad_output of shape {}",
        op, detail::format_shape(index_sizes), detail::format_shape(grad_sizes)));
  }
  if (num_weights < 0) {
    throw Error(fmt::format("{}: num_weights must not be negative, got {}", op, num_weights));
  }
  if (padding_idx != -1 && (padding_idx < -num_weights || padding_idx >= num_weights)) {
    throw Error(fmt::format("{}: padding_idx {} is out of range for {} embeddings", op,
                            padding_idx, num_weights));
  }
  const int64_t embedding_dim = grad_output.size(-1);
  grad_output = grad_output.contiguous();
  indices = indices.contiguous();
  return {OutputSpec{DimVector{num_weights, embedding_dim}, grad_output.dtype(), device}};
}

// index_add: index is a 0-D or 1-D Int32 or Int64 tensor; dim wraps on self; source has self's
// dtype and self's shape but for dim, whose size is the number of indices (a 0-D self takes
// one index and a source of one element); an integer self takes an integer alpha. self, index
// and source reach the kernel contiguous. out has self's shape and dtype. The kernel refuses an
// index out of range.
std::array<OutputSpec, 1> index_add_out(Tensor& self, int64_t dim, Tensor& index, Tensor& source,
                                        const Scalar& alpha) {
  constexpr std::string_view op = "index_add";
  const Device device = support::common_device({&self, &index, &source});
  if (index.dim() > 1) {
    throw Error(
        fmt::format("{}: expected a 0-D or 1-D index, got shape {}; flatten it with "
                    ".reshape({{-1}})",
                    op, detail::format_shape(index.sizes())));
  }
  prepare_indices(op, "index", index);
  const int64_t wrapped = detail::wrap_dim(op, dim, self.dim());
  support::check_same_dtype(source, self.dtype(), "index_add: source");
  if (!is_floating_point(self.dtype()) && (alpha.is_floating_point() || alpha.is_bool())) {
    throw Error(fmt::format("{}: for an integer self ({}), alpha must be an integer", op,
                            dtype_name(self.dtype())));
  }
  DimVector expected(self.sizes());
  if (self.dim() > 0) expected[wrapped] = index.numel();
  const bool fits = self.dim() == 0
                        ? index.numel() == 1 && source.numel() == 1 && source.dim() <= 1
                        : std::ranges::equal(expected.ref(), source.sizes());
  if (!fits) {
    throw Error(fmt::format(
        "{}: expected source of shape {} (self's shape with dim {} holding one slice per "
        "index), but got source of shape {}",
        op, detail::format_shape(expected.ref()), dim, detail::format_shape(source.sizes())));
  }
  self = self.contiguous();
  index = index.contiguous();
  source = source.contiguous();
  return {OutputSpec{DimVector(self.sizes()), self.dtype(), device}};
}

}  // namespace bp::meta

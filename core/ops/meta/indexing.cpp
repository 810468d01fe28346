// Meta functions of the ops that pick elements by an index tensor: embedding and index_select.
// Indices reach the kernel as Int64, whatever integer dtype the caller used, so that a backend
// implements one index type.
#include "meta_support.h"

#include <core_generated/MetaFunctions.h>

#include <fmt/format.h>

namespace bp::meta {
namespace {

void prepare_indices(std::string_view op, const char* name, Tensor& indices) {
  if (indices.dtype() != kInt64 && indices.dtype() != kInt32) {
    throw Error(
        fmt::format("{}: expected {} of dtype Long or Int, got {}; convert with "
                    ".to(bp::kInt64)",
                    op, name, dtype_name(indices.dtype())));
  }
  if (indices.dtype() != kInt64) indices = indices.to(kInt64);
}

}  // namespace

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

}  // namespace bp::meta

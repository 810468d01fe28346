// The view ops of ops.yaml: new sizes, strides and offset over the same storage.
#include <backplane/backplane.h>

#include <core_generated/CompositeFunctions.h>

#include "tensor/shape.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <vector>

namespace bp::composite {
namespace {

Tensor make_view(const Tensor& base, DimVector sizes, DimVector strides, int64_t storage_offset) {
  return Tensor(make_intrusive<TensorImpl>(base.impl()->storage(), base.dtype(), std::move(sizes),
                                           std::move(strides), storage_offset));
}

// Resolves a -1 in `shape` so that it holds `numel` elements.
DimVector infer_size(IntArrayRef shape, int64_t numel, const char* op) {
  DimVector sizes(shape);
  std::optional<size_t> inferred;
  int64_t known = 1;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == -1) {
      if (inferred) {
        throw Error(fmt::format("{}: only one dimension can be inferred (-1) in shape {}", op,
                                detail::format_shape(shape)));
      }
      inferred = d;
    } else if (sizes[d] < 0) {
      throw Error(fmt::format("{}: invalid size {} in shape {}", op, sizes[d],
                              detail::format_shape(shape)));
    } else if (__builtin_mul_overflow(known, sizes[d], &known)) {
      throw Error(fmt::format("{}: shape {} has more than {} elements", op,
                              detail::format_shape(shape), std::numeric_limits<int64_t>::max()));
    }
  }
  if (inferred) {
    if (known == 0) {
      throw Error(
          fmt::format("{}: cannot infer the -1 in shape {} for a tensor of {} elements: "
                      "with a 0 among the other sizes any value fits",
                      op, detail::format_shape(shape), numel));
    }
    if (numel % known == 0) sizes[*inferred] = numel / known;
  }
  if (detail::checked_numel(sizes, op) != numel) {
    throw Error(fmt::format("{}: shape {} is invalid for a tensor of {} elements", op,
                            detail::format_shape(shape), numel));
  }
  return sizes;
}

// Strides that let a tensor of `old_sizes`/`old_strides` be read as `new_sizes` without a
// copy, or nullopt. As PyTorch's computeStride: the old dims split into chunks that are
// contiguous among themselves, and each new dim must lie within one chunk.
std::optional<DimVector> view_strides(IntArrayRef old_sizes, IntArrayRef old_strides,
                                      IntArrayRef new_sizes, int64_t numel) {
  if (numel == 0 || old_sizes.empty()) {
    if (DimVector(old_sizes) == DimVector(new_sizes)) return DimVector(old_strides);
    return detail::contiguous_strides(new_sizes);
  }
  DimVector new_strides(new_sizes.size());
  int64_t view_d = static_cast<int64_t>(new_sizes.size()) - 1;
  int64_t chunk_base_stride = old_strides[old_strides.size() - 1];
  int64_t tensor_numel = 1;
  int64_t view_numel = 1;
  for (int64_t tensor_d = static_cast<int64_t>(old_sizes.size()) - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel *= old_sizes[tensor_d];
    const bool chunk_ends =
        tensor_d == 0 || (old_sizes[tensor_d - 1] != 1 &&
                          old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride);
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
      new_strides[view_d] = view_numel * chunk_base_stride;
      view_numel *= new_sizes[view_d];
      --view_d;
    }
    if (view_numel != tensor_numel) return std::nullopt;
    if (tensor_d > 0) {
      chunk_base_stride = old_strides[tensor_d - 1];
      tensor_numel = 1;
      view_numel = 1;
    }
  }
  if (view_d != -1) return std::nullopt;
  return new_strides;
}

}  // namespace

Tensor view(const Tensor& self, IntArrayRef shape) {
  DimVector sizes = infer_size(shape, self.numel(), "view");
  std::optional<DimVector> new_strides =
      view_strides(self.sizes(), self.strides(), sizes, self.numel());
  if (!new_strides) {
    throw Error(fmt::format(
        "view: shape {} is not compatible with the tensor's sizes {} and strides {}: at least "
        "one new dimension spans two non-contiguous parts of it; use .reshape(...) instead, "
        "which copies when it must",
        detail::format_shape(shape), detail::format_shape(self.sizes()),
        detail::format_shape(self.strides())));
  }
  return make_view(self, std::move(sizes), std::move(*new_strides), self.storage_offset());
}

Tensor reshape(const Tensor& self, IntArrayRef shape) {
  DimVector sizes = infer_size(shape, self.numel(), "reshape");
  if (std::optional<DimVector> new_strides =
          view_strides(self.sizes(), self.strides(), sizes, self.numel())) {
    return make_view(self, std::move(sizes), std::move(*new_strides), self.storage_offset());
  }
  return self.contiguous().view(sizes);
}

Tensor permute(const Tensor& self, IntArrayRef dims) {
  if (static_cast<int64_t>(dims.size()) != self.dim()) {
    throw Error(fmt::format("permute: dims {} has {} entries, but the tensor has {} dims",
                            detail::format_shape(dims), dims.size(), self.dim()));
  }
  DimVector sizes(dims.size());
  DimVector new_strides(dims.size());
  std::vector<bool> seen(dims.size(), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = detail::wrap_dim("permute", dims[i], self.dim(), /*wrap_scalar=*/false);
    if (seen[d]) {
      throw Error(fmt::format("permute: dims {} name dim {} more than once",
                              detail::format_shape(dims), d));
    }
    seen[d] = true;
    sizes[i] = self.sizes()[d];
    new_strides[i] = self.strides()[d];
  }
  return make_view(self, std::move(sizes), std::move(new_strides), self.storage_offset());
}

Tensor transpose_int(const Tensor& self, int64_t dim0, int64_t dim1) {
  const int64_t d0 = detail::wrap_dim("transpose", dim0, self.dim());
  const int64_t d1 = detail::wrap_dim("transpose", dim1, self.dim());
  DimVector sizes(self.sizes());
  DimVector new_strides(self.strides());
  if (self.dim() > 0) {
    std::swap(sizes[d0], sizes[d1]);
    std::swap(new_strides[d0], new_strides[d1]);
  }
  return make_view(self, std::move(sizes), std::move(new_strides), self.storage_offset());
}

Tensor slice_Tensor(const Tensor& self, int64_t dim, std::optional<int64_t> start,
                    std::optional<int64_t> end, int64_t step) {
  const int64_t d = detail::wrap_dim("slice", dim, self.dim(), /*wrap_scalar=*/false);
  if (step <= 0) throw Error(fmt::format("slice: step must be positive, got {}", step));
  // Negative bounds count from the end; out-of-range bounds clamp, as Python slicing does.
  const int64_t size = self.sizes()[d];
  int64_t first = start.value_or(0);
  int64_t last = end.value_or(size);
  if (first < 0) first += size;
  if (last < 0) last += size;
  first = std::clamp<int64_t>(first, 0, size);
  last = std::clamp<int64_t>(last, first, size);
  DimVector sizes(self.sizes());
  DimVector new_strides(self.strides());
  // Written so that no step, however large, overflows: a slice of one element keeps the
  // stride, which a dim of size 1 never uses.
  sizes[d] = last == first ? 0 : 1 + (last - first - 1) / step;
  if (sizes[d] > 1) new_strides[d] = self.strides()[d] * step;
  return make_view(self, std::move(sizes), std::move(new_strides),
                   self.storage_offset() + first * self.strides()[d]);
}

Tensor select_int(const Tensor& self, int64_t dim, int64_t index) {
  const int64_t d = detail::wrap_dim("select", dim, self.dim(), /*wrap_scalar=*/false);
  const int64_t size = self.sizes()[d];
  if (index < -size || index >= size) {
    throw Error(
        fmt::format("select: index {} is out of range for dim {} of size {} (expected "
                    "{}..{})",
                    index, d, size, -size, size - 1));
  }
  if (index < 0) index += size;
  DimVector sizes(self.sizes());
  DimVector new_strides(self.strides());
  sizes.erase(d);
  new_strides.erase(d);
  return make_view(self, std::move(sizes), std::move(new_strides),
                   self.storage_offset() + index * self.strides()[d]);
}

Tensor expand(const Tensor& self, IntArrayRef target) {
  const int64_t rank = static_cast<int64_t>(target.size());
  if (rank < self.dim()) {
    throw Error(
        fmt::format("expand: the target shape {} has fewer dims than the tensor's shape "
                    "{}; expand can only add leading dims",
                    detail::format_shape(target), detail::format_shape(self.sizes())));
  }
  DimVector sizes(target.size());
  DimVector new_strides(target.size());
  for (int64_t i = rank - 1; i >= 0; --i) {
    const int64_t own_dim = i - (rank - self.dim());  // negative for a new leading dim
    int64_t size = own_dim >= 0 ? self.sizes()[own_dim] : 1;
    // A new size-1 dim gets the stride it would have in a contiguous layout.
    int64_t stride = own_dim >= 0   ? self.strides()[own_dim]
                     : i + 1 < rank ? sizes[i + 1] * new_strides[i + 1]
                                    : 1;
    int64_t wanted = target[i];
    if (wanted == -1) {
      if (own_dim < 0) {
        throw Error(
            fmt::format("expand: -1 in target shape {} at the new leading dim {}; only "
                        "existing dims can keep their size",
                        detail::format_shape(target), i));
      }
      wanted = size;
    } else if (wanted < 0) {
      throw Error(fmt::format("expand: invalid size {} in target shape {}", wanted,
                              detail::format_shape(target)));
    }
    if (wanted != size) {
      if (size != 1) {
        throw Error(fmt::format(
            "expand: the expanded size {} must match the existing size {} "
            "at non-singleton dim {} (target shape {}, tensor shape {})",
            wanted, size, i, detail::format_shape(target), detail::format_shape(self.sizes())));
      }
      size = wanted;
      stride = 0;
    }
    sizes[i] = size;
    new_strides[i] = stride;
  }
  detail::checked_numel(sizes, "expand");
  return make_view(self, std::move(sizes), std::move(new_strides), self.storage_offset());
}

Tensor squeeze(const Tensor& self) {
  DimVector sizes;
  DimVector new_strides;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (self.sizes()[d] == 1) continue;
    sizes.push_back(self.sizes()[d]);
    new_strides.push_back(self.strides()[d]);
  }
  return make_view(self, std::move(sizes), std::move(new_strides), self.storage_offset());
}

Tensor squeeze_dim(const Tensor& self, int64_t dim) {
  const int64_t d = detail::wrap_dim("squeeze", dim, self.dim());
  DimVector sizes(self.sizes());
  DimVector new_strides(self.strides());
  if (self.dim() > 0 && sizes[d] == 1) {
    sizes.erase(d);
    new_strides.erase(d);
  }
  return make_view(self, std::move(sizes), std::move(new_strides), self.storage_offset());
}

Tensor unsqueeze(const Tensor& self, int64_t dim) {
  const int64_t d = detail::wrap_dim("unsqueeze", dim, self.dim() + 1);
  const int64_t stride = d < self.dim() ? self.sizes()[d] * self.strides()[d] : 1;
  DimVector sizes(self.sizes());
  DimVector new_strides(self.strides());
  sizes.insert(d, 1);
  new_strides.insert(d, stride);
  return make_view(self, std::move(sizes), std::move(new_strides), self.storage_offset());
}

// As PyTorch: a 0-dim tensor becomes one element of one dim, and the dims from start_dim to
// end_dim become one.
Tensor flatten_using_ints(const Tensor& self, int64_t start_dim, int64_t end_dim) {
  const int64_t first = detail::wrap_dim("flatten", start_dim, self.dim());
  const int64_t last = detail::wrap_dim("flatten", end_dim, self.dim());
  if (first > last) {
    throw Error(
        fmt::format("flatten: start_dim {} comes after end_dim {} (dims {} and {} of a "
                    "tensor of shape {})",
                    start_dim, end_dim, first, last, detail::format_shape(self.sizes())));
  }
  if (self.dim() == 0) return self.reshape({1});
  if (first == last) return self;
  const IntArrayRef sizes = self.sizes();
  DimVector flat(IntArrayRef(sizes.data(), static_cast<size_t>(first)));
  flat.push_back(detail::checked_numel(
      IntArrayRef(sizes.data() + first, static_cast<size_t>(last - first + 1)), "flatten"));
  for (int64_t d = last + 1; d < self.dim(); ++d) flat.push_back(sizes[d]);
  return self.reshape(flat);
}

}  // namespace bp::composite

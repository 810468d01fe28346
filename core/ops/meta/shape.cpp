// Meta functions of cat, copy_, fill_ and arange.
#include "meta_support.h"

#include "tensor/internal_overlap.h"

#include <core_generated/MetaFunctions.h>

#include <backplane/sdk/checked_arithmetic.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

namespace bp::meta {
namespace {

// PyTorch still accepts 1-D empty tensors in any cat, whatever the other tensors' shapes.
bool is_legacy_empty(const Tensor& t) { return t.dim() == 1 && t.size(0) == 0; }

bool is_same_view(const Tensor& a, const Tensor& b) {
  return a.impl()->storage().get() == b.impl()->storage().get() &&
         a.storage_offset() == b.storage_offset() && a.dtype() == b.dtype() &&
         DimVector(a.sizes()) == DimVector(b.sizes()) &&
         DimVector(a.strides()) == DimVector(b.strides());
}

[[noreturn]] void throw_too_many_elements(const Scalar& start, const Scalar& end,
                                          const Scalar& step) {
  throw Error(fmt::format("arange: the range {} -> {} with step {} has more than {} elements",
                          start.to<double>(), end.to<double>(), step.to<double>(),
                          std::numeric_limits<int64_t>::max()));
}

}  // namespace

// cat: the kernel gets only the tensors that hold elements, each converted to out's dtype (the
// promoted dtype of all inputs), with out's rank and out's sizes except along dim. The list may
// be empty when out has no elements. The kernel wraps dim against out.dim(); it is in range.
std::array<OutputSpec, 1> cat_out(std::vector<Tensor>& tensors, int64_t dim) {
  if (tensors.empty()) throw Error("cat: expected a non-empty list of tensors");
  const Device device = support::common_device(std::span<const Tensor>(tensors));
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].dim() == 0) {
      throw Error(
          fmt::format("cat: zero-dimensional tensor (at position {}) cannot be "
                      "concatenated; unsqueeze(0) it first",
                      i));
    }
  }
  const DType dtype = detail::result_type(std::span<const Tensor>(tensors));

  const auto reference = std::find_if(tensors.begin(), tensors.end(),
                                      [](const Tensor& t) { return !is_legacy_empty(t); });
  if (reference == tensors.end()) {  // only legacy empty tensors: the result is one too
    detail::wrap_dim("cat", dim, 1);
    tensors.clear();
    return {OutputSpec{{0}, dtype, device}};
  }
  const int64_t rank = reference->dim();
  const int64_t d = detail::wrap_dim("cat", dim, rank, /*wrap_scalar=*/false);
  const size_t reference_index = static_cast<size_t>(reference - tensors.begin());
  DimVector shape(reference->sizes());
  shape[d] = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (is_legacy_empty(t)) continue;
    if (t.dim() != rank) {
      throw Error(
          fmt::format("cat: tensors must have the same number of dims: tensor {} has {} "
                      "(shape {}), tensor {} has {} (shape {})",
                      reference_index, rank, detail::format_shape(reference->sizes()), i, t.dim(),
                      detail::format_shape(t.sizes())));
    }
    for (int64_t k = 0; k < rank; ++k) {
      if (k != d && t.sizes()[k] != reference->sizes()[k]) {
        throw Error(
            fmt::format("cat: sizes of tensors must match except in dim {}: expected "
                        "size {} but got size {} in dim {} for tensor {} in the list "
                        "(shapes {} and {})",
                        d, reference->sizes()[k], t.sizes()[k], k, i,
                        detail::format_shape(reference->sizes()), detail::format_shape(t.sizes())));
      }
    }
    const std::optional<int64_t> total = plugin::checked_add(shape[d], t.sizes()[d]);
    if (!total) {
      throw Error(
          fmt::format("cat: the sizes of the tensors along dim {} overflow int64 (tensor {} "
                      "of shape {} adds {} to {}); the result cannot have that many "
                      "elements",
                      d, i, detail::format_shape(t.sizes()), t.sizes()[d], shape[d]));
    }
    shape[d] = *total;
  }

  std::vector<Tensor> parts;
  parts.reserve(tensors.size());
  for (Tensor& t : tensors) {
    if (t.numel() == 0) continue;
    parts.push_back(t.dtype() == dtype ? t : t.to(dtype));
  }
  tensors = std::move(parts);
  return {OutputSpec{std::move(shape), dtype, device}};
}

// copy_: src has self's shape (broadcast dims are views with stride 0) and lives on self's
// device (moved there first when it was elsewhere); its dtype may differ from self's, and the
// kernel converts each element as static_cast does (through float for Half and BFloat16).
// self may be strided but no two of its elements share memory, and src does not overlap self
// unless it is the same view.
void copy_(Tensor& self, Tensor& src, bool /*non_blocking*/) {
  support::check_defined(self);
  support::check_defined(src);
  detail::check_no_internal_overlap(self.sizes(), self.strides(), "copy_", "self");
  if (!detail::is_expandable_to(src.sizes(), self.sizes())) {
    throw Error(
        fmt::format("copy_: the source's shape {} cannot be broadcast to the "
                    "destination's shape {}",
                    detail::format_shape(src.sizes()), detail::format_shape(self.sizes())));
  }
  if (src.device() != self.device()) src = src.to(self.device());
  if (src.impl()->storage().get() == self.impl()->storage().get() && !is_same_view(src, self)) {
    src = src.clone();
  }
  if (DimVector(src.sizes()) != DimVector(self.sizes())) src = src.expand(self.sizes());
}

// fill_: self may be strided but no two of its elements share memory; value fits self's
// dtype (the kernel converts it as static_cast does, truncating fractions for integers).
void fill__Scalar(Tensor& self, const Scalar& value) {
  support::check_defined(self);
  detail::check_no_internal_overlap(self.sizes(), self.strides(), "fill_", "self");
  support::check_scalar_fits("fill_", value, self.dtype());
}

// arange: out has ceil((end - start) / step) elements, Int64 when start, end and step are all
// integers (or bools), else Float32. The kernel writes start + i * step, computed in out's
// dtype (double for Float32 and Float64 outs, as PyTorch's accumulate type).
std::array<OutputSpec, 1> arange_start_out(const Scalar& start, const Scalar& end,
                                           const Scalar& step) {
  const bool integral =
      !start.is_floating_point() && !end.is_floating_point() && !step.is_floating_point();
  const DType dtype = integral ? kInt64 : kFloat32;
  int64_t size = 0;
  if (integral) {
    const auto first = static_cast<__int128>(start.to<int64_t>());
    const auto last = static_cast<__int128>(end.to<int64_t>());
    const auto increment = static_cast<__int128>(step.to<int64_t>());
    if (increment == 0) throw Error("arange: step must be nonzero");
    if ((increment > 0 && last < first) || (increment < 0 && last > first)) {
      throw Error(
          fmt::format("arange: the bounds {} -> {} are inconsistent with the sign of step "
                      "{}",
                      start.to<int64_t>(), end.to<int64_t>(), step.to<int64_t>()));
    }
    const __int128 sign = increment > 0 ? 1 : -1;
    const __int128 count = (last - first + increment - sign) / increment;
    if (count > std::numeric_limits<int64_t>::max()) throw_too_many_elements(start, end, step);
    size = static_cast<int64_t>(count);
  } else {
    const double first = start.to<double>();
    const double last = end.to<double>();
    const double increment = step.to<double>();
    if (!std::isfinite(first) || !std::isfinite(last)) {
      throw Error(fmt::format("arange: unsupported range {} -> {}; both bounds must be finite",
                              first, last));
    }
    if (increment == 0 || std::isnan(increment)) throw Error("arange: step must be nonzero");
    if ((increment > 0 && last < first) || (increment < 0 && last > first)) {
      throw Error(
          fmt::format("arange: the bounds {} -> {} are inconsistent with the sign of step "
                      "{}",
                      first, last, increment));
    }
    const double count = std::ceil((last - first) / increment);
    if (!(count < static_cast<double>(std::numeric_limits<int64_t>::max()))) {
      throw_too_many_elements(start, end, step);
    }
    size = static_cast<int64_t>(count);
  }
  // No tensor argument decides the device: an out= tensor's is taken as it is.
  return {OutputSpec{{size}, dtype, std::nullopt}};
}

}  // namespace bp::meta
